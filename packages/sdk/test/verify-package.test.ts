import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { build } from 'esbuild';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateSecret, verifyDelivery } from '../src/verify/index.js';
import { SECRET, deliveryId, envelopeBody, nowSeconds, signedDelivery } from './helpers/deliveries.js';

const sdkRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const verifyDir = join(sdkRoot, 'src/verify');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mts|js|mjs)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Module specifiers of static imports, re-exports and dynamic imports. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]/g];
  for (const re of patterns) for (const m of source.matchAll(re)) found.push(m[1]!);
  for (const m of source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) found.push(m[1]!);
  return found;
}

describe('svc-sdk/verify has no dependencies', () => {
  it('imports only its own files: no packages, no node: builtins', () => {
    const files = sourceFiles(verifyDir);
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      for (const spec of specifiers(source)) {
        expect(spec, `${relative(sdkRoot, file)} imports ${spec}`).toMatch(/^\.\/[a-z-]+\.js$/);
      }
      expect(source, file).not.toMatch(/\brequire\s*\(|node:crypto|['"]crypto['"]/);
    }
  });

  it('uses none of the packages svc-sdk depends on', () => {
    const pkg = JSON.parse(readFileSync(join(sdkRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
    const deps = Object.keys({
      ...(pkg.dependencies as object),
      ...(pkg.peerDependencies as object),
      ...(pkg.optionalDependencies as object),
    });
    const imported = sourceFiles(verifyDir).flatMap((f) => specifiers(readFileSync(f, 'utf8')));
    for (const dep of deps) expect(imported.some((s) => s === dep || s.startsWith(`${dep}/`))).toBe(false);
  });

  it('nothing under packages/sdk/src imports the server', () => {
    for (const file of sourceFiles(join(sdkRoot, 'src'))) {
      const source = readFileSync(file, 'utf8');
      for (const spec of specifiers(source)) {
        expect(spec, `${relative(sdkRoot, file)} imports ${spec}`).not.toMatch(/svc-server|packages\/server|\.\.\/server/);
        if (spec.startsWith('.')) {
          expect(resolve(dirname(file), spec).startsWith(join(sdkRoot, 'src')), `${file}: ${spec}`).toBe(true);
        }
      }
    }
  });

  /** svc-sdk/verify bundled for no platform, loaded in a bare realm as in an edge worker: no process, Buffer, atob. */
  async function bareRealm(): Promise<vm.Context> {
    const result = await build({
      entryPoints: [join(verifyDir, 'index.ts')],
      bundle: true,
      platform: 'neutral',
      format: 'iife',
      globalName: 'svcVerify',
      write: false,
      logLevel: 'silent',
    });
    const context = vm.createContext({ crypto: globalThis.crypto, TextEncoder, TextDecoder });
    vm.runInContext(result.outputFiles[0]!.text, context);
    return context;
  }

  it('bundles for a platform without Node built-ins and verifies with only Web Crypto and TextEncoder', async () => {
    const context = await bareRealm();
    const d = signedDelivery();
    context.input = { secret: SECRET, headers: d.headers, rawBody: d.body };
    const envelope = await vm.runInContext('svcVerify.verifyDelivery(input)', context);
    expect(envelope.id).toBe(d.id);
    context.bad = { secret: 'whsec_other', headers: d.headers, rawBody: d.body };
    const code2 = await vm.runInContext('svcVerify.verifyDelivery(bad).then(() => "ok", (e) => e.code)', context);
    expect(code2).toBe('signature_mismatch');
    // handleDelivery too: its claim tokens come from Web Crypto as well.
    context.handled = { secret: SECRET, headers: d.headers, rawBody: d.body, store: null };
    const outcomes = await vm.runInContext(
      `(async () => {
        const options = { ...handled, store: new svcVerify.MemoryDedupeStore() };
        const first = await svcVerify.handleDelivery(options, (e) => e.id);
        const again = await svcVerify.handleDelivery(options, () => 'ran twice');
        return [first.result, again.duplicate];
      })()`,
      context,
    );
    expect(outcomes).toEqual([d.id, true]);
    expect(vm.runInContext('typeof Buffer + typeof process + typeof require', context)).toBe(
      'undefinedundefinedundefined',
    );
  });

  it('Standard Webhooks there too: v1 and v1a verified, entries signed (base64 without atob or Buffer)', async () => {
    const context = await bareRealm();
    expect(vm.runInContext('typeof atob + typeof btoa', context)).toBe('undefinedundefined');
    const secret = generateSecret();
    const id = deliveryId();
    const body = envelopeBody(id);
    const timestamp = nowSeconds();
    const signature = new Webhook(secret).sign(id, new Date(timestamp * 1000), body);
    context.input = { secret, id, body, timestamp, signature };
    const outcome = await vm.runInContext(
      `(async () => {
        const headers = { 'webhook-id': input.id, 'webhook-timestamp': String(input.timestamp),
          'webhook-signature': input.signature };
        const v1 = await svcVerify.verifyDelivery({ secret: input.secret, headers, rawBody: input.body });
        const keys = await svcVerify.generateSigningKeyPair();
        const signed = await svcVerify.signedHeaders({ privateKeys: [keys.privateKey], timestamp: input.timestamp,
          rawBody: input.body, deliveryId: input.id, signatureScheme: 'standard' });
        const v1a = await svcVerify.verifyDelivery({ publicKey: keys.publicKey, headers: signed, rawBody: input.body });
        const other = await svcVerify.generateSigningKeyPair();
        const refused = await svcVerify
          .verifyDelivery({ publicKey: other.publicKey, headers: signed, rawBody: input.body })
          .then(() => 'ok', (e) => e.code);
        const entry = await svcVerify.signStandard({ secret: input.secret, deliveryId: input.id,
          timestamp: input.timestamp, rawBody: input.body });
        return [v1.id, v1a.id, refused, entry];
      })()`,
      context,
    );
    expect(outcome).toEqual([id, id, 'signature_mismatch', signature]);
  });
});

describe('Web Crypto is the only path', () => {
  afterEach(() => vi.restoreAllMocks());

  it('computes the HMAC with crypto.subtle', async () => {
    const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey');
    const sign = vi.spyOn(globalThis.crypto.subtle, 'sign');
    const d = signedDelivery();
    await verifyDelivery({ secrets: [SECRET, 'whsec_other'], headers: d.headers, rawBody: d.body });
    expect(importKey).toHaveBeenCalledTimes(2);
    expect(sign).toHaveBeenCalledTimes(2);
    expect(sign.mock.calls[0]![0]).toBe('HMAC');
  });

  it('fails loudly when the runtime has no Web Crypto', async () => {
    vi.spyOn(globalThis, 'crypto', 'get').mockReturnValue(undefined as unknown as Crypto);
    const d = signedDelivery();
    await expect(verifyDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body })).rejects.toThrow(/Web Crypto/);
  });
});
