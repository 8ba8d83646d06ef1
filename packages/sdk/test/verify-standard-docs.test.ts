import { execFile } from 'node:child_process';
import * as nodeCrypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import * as standardwebhooks from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import * as svcVerify from '../src/verify/index.js';
import { deliveryId, envelopeBody, nowSeconds } from './helpers/deliveries.js';

// docs/receiving-webhooks.md, section "Standard Webhooks": its worked example is checked against three independent
// implementations, and its TypeScript snippets are run as written on fresh deliveries.

const doc = readFileSync(fileURLToPath(new URL('../../../docs/receiving-webhooks.md', import.meta.url)), 'utf8');

/** The text under a heading, up to the next heading of the same or a higher level. */
function section(heading: string): string {
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/receiving-webhooks.md has no heading "${heading}"`);
  const level = /^#+/.exec(heading)![0];
  const rest = doc.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level.length}} `, 'm'));
  return end < 0 ? rest : rest.slice(0, end);
}

function block(text: string, language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)\\n```').exec(text);
  if (!match) throw new Error(`no \`\`\`${language} block`);
  return match[1]!;
}

function value(text: string, label: string): string {
  const match = new RegExp(`^${label}:\\s+(\\S+)$`, 'm').exec(text);
  if (!match) throw new Error(`no "${label}:" line`);
  return match[1]!;
}

const AsyncFunction = (async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<unknown>;

/** Runs a ```ts snippet of the doc: its imports bound to `modules`, its free variables to `scope`. */
async function run(heading: string, scope: Record<string, unknown>, result: string): Promise<unknown> {
  const { code } = await transform(block(section(heading), 'ts'), { loader: 'ts' });
  const modules: Record<string, unknown> = { standardwebhooks, 'node:crypto': nodeCrypto, 'svc-sdk/verify': svcVerify };
  const body = code.replace(/^import\s*(\{[^}]*\})\s*from\s*"([^"]+)";$/gm, (_, names: string, name: string) => {
    if (!(name in modules)) throw new Error(`the snippet imports ${name}`);
    return `const ${names.replace(/\s+as\s+/g, ': ')} = __modules[${JSON.stringify(name)}];`;
  });
  const snippet = new AsyncFunction('__modules', ...Object.keys(scope), `${body}\nreturn ${result};`);
  return snippet(modules, ...Object.values(scope));
}

describe('the worked example of Standard Webhooks', () => {
  const example = block(section('### Worked example: Standard Webhooks'), 'text');
  const body = /^body:\s+(.+)$/m.exec(block(section('### Worked example'), 'text'))![1]!;
  const secret = value(example, 'standard secret');
  const id = value(example, 'webhook-id');
  const timestamp = value(example, 'webhook-timestamp');
  const v1 = value(example, 'v1 signature');
  const publicKey = value(example, 'public key');
  const v1a = value(example, 'v1a signature');
  const now = Number(timestamp) * 1000;

  it('states the v1 entry that standardwebhooks and svc-sdk/verify compute', async () => {
    expect(JSON.parse(body).id).toBe(id);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(new standardwebhooks.Webhook(secret).sign(id, new Date(now), body)).toBe(v1);
    expect(await svcVerify.signStandard({ secret, deliveryId: id, timestamp, rawBody: body })).toBe(v1);
  });

  it('states the shell line that computes it with openssl', async () => {
    const env = { PATH: process.env.PATH, SECRET: secret, WEBHOOK_ID: id, TIMESTAMP: timestamp, BODY: body };
    const script = block(section('### Worked example: Standard Webhooks'), 'sh');
    const { stdout } = await promisify(execFile)('sh', ['-c', script], { env });
    expect(`v1,${stdout.trim()}`).toBe(v1);
  });

  it('verifies with svc-sdk/verify: v1 with the secret, v1a with the public key', async () => {
    const headers = { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `${v1} ${v1a}` };
    const envelope = JSON.parse(body);
    await expect(svcVerify.verifyDelivery({ secret, headers, rawBody: body, now })).resolves.toEqual(envelope);
    await expect(svcVerify.verifyDelivery({ publicKey, headers, rawBody: body, now })).resolves.toEqual(envelope);
    const tampered = body.replace('beans', 'beanz');
    await expect(svcVerify.verifyDelivery({ publicKey, headers, rawBody: tampered, now })).rejects.toMatchObject({
      code: 'signature_mismatch',
    });
  });

  it('states a v1a entry node:crypto verifies with the public key', () => {
    const x = Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url');
    const key = nodeCrypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    const signature = Buffer.from(v1a.slice('v1a,'.length), 'base64');
    expect(nodeCrypto.verify(null, Buffer.from(`${id}.${timestamp}.${body}`), key, signature)).toBe(true);
    expect(nodeCrypto.verify(null, Buffer.from(`${id}.${Number(timestamp) + 1}.${body}`), key, signature)).toBe(false);
  });

  it('shows the same values in the sample request', () => {
    const request = block(section('### Switching a target'), 'http');
    expect(request).toContain(`webhook-id: ${id}\nwebhook-timestamp: ${timestamp}\nwebhook-signature: ${v1}`);
  });
});

describe('the snippets of the Standard Webhooks section, run as written', () => {
  async function hmacDelivery(secret: string) {
    const id = deliveryId();
    const rawBody = envelopeBody(id);
    const headers = await svcVerify.signedHeaders({
      secrets: [secret],
      timestamp: nowSeconds(),
      rawBody,
      deliveryId: id,
      signatureScheme: 'standard',
    });
    return { id, rawBody, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) };
  }

  async function ed25519Delivery() {
    const { publicKey, privateKey } = await svcVerify.generateSigningKeyPair();
    const id = deliveryId();
    const rawBody = Buffer.from(envelopeBody(id));
    const headers = await svcVerify.signedHeaders({
      privateKeys: [privateKey],
      timestamp: nowSeconds(),
      rawBody,
      deliveryId: id,
      signatureScheme: 'standard',
    });
    return { id, rawBody, publicKey, headers };
  }

  it('standardwebhooks in TypeScript', async () => {
    const secret = svcVerify.generateSecret();
    const d = await hmacDelivery(secret);
    const scope = (rawBody: string) => ({ process: { env: { SVC_WEBHOOK_SECRET: secret } }, req: d, rawBody });
    const heading = '### TypeScript and JavaScript with `standardwebhooks`';
    expect(await run(heading, scope(d.rawBody), 'envelope')).toMatchObject({ id: d.id });
    await expect(run(heading, scope(`${d.rawBody} `), 'envelope')).rejects.toThrow(/No matching signature/);
  });

  it('svc-sdk/verify with an ed25519 public key', async () => {
    const d = await ed25519Delivery();
    const other = await svcVerify.generateSigningKeyPair();
    const scope = (key: string) => ({ process: { env: { SVC_WEBHOOK_PUBLIC_KEY: key } }, req: d, rawBody: d.rawBody });
    expect(await run('### svc-sdk/verify', scope(d.publicKey), 'envelope')).toMatchObject({ id: d.id });
    await expect(run('### svc-sdk/verify', scope(other.publicKey), 'envelope')).rejects.toMatchObject({
      code: 'signature_mismatch',
    });
  });

  it('ed25519 with node:crypto', async () => {
    const d = await ed25519Delivery();
    const heading = '### Ed25519 with `node:crypto`';
    const scope = (rawBody: Buffer, key = d.publicKey) => ({
      process: { env: { SVC_WEBHOOK_PUBLIC_KEY: key } },
      req: d,
      rawBody,
    });
    expect(await run(heading, scope(d.rawBody), 'valid')).toBe(true);
    const tampered = Buffer.from(d.rawBody);
    tampered[10] = tampered[10]! ^ 1;
    expect(await run(heading, scope(tampered), 'valid')).toBe(false);
    expect(await run(heading, scope(d.rawBody, (await svcVerify.generateSigningKeyPair()).publicKey), 'valid')).toBe(
      false,
    );
  });

  it('Python and Go use the calls of the upstream libraries (checked against standard-webhooks at b2fa7b8)', () => {
    const python = block(section('### Python with `standardwebhooks`'), 'python');
    expect(python).toContain('from standardwebhooks.webhooks import Webhook, WebhookVerificationError');
    expect(python).toMatch(/wh = Webhook\(.*\)[\s\S]*wh\.verify\(raw_body, /);
    const go = block(section('### Go with `standardwebhooks`'), 'go');
    expect(go).toContain('standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"');
    expect(go).toMatch(/wh, err := standardwebhooks\.NewWebhook\([\s\S]*wh\.Verify\(body, r\.Header\)/);
  });
});
