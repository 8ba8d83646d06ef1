import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOLERANCE_SECONDS, sign, verifyDelivery } from '../src/verify/index.js';
import { opensslHmacHex, signedMessage } from './helpers/openssl.js';

const doc = readFileSync(fileURLToPath(new URL('../../../docs/receiving-webhooks.md', import.meta.url)), 'utf8');

function line(label: string): string {
  const match = new RegExp(`^${label}:\\s+(.+)$`, 'm').exec(doc);
  if (!match) throw new Error(`docs/receiving-webhooks.md has no "${label}:" line in its worked example`);
  return match[1]!;
}

describe('docs/receiving-webhooks.md worked example', () => {
  const secret = line('secret');
  const timestamp = line('timestamp');
  const body = line('body');
  const signature = line('signature');

  it('states the signature openssl computes', async () => {
    expect(signature).toBe(`v1=${await opensslHmacHex(secret, signedMessage(timestamp, body))}`);
  });

  it('states the signature svc-sdk/verify computes, and verifies as a delivery', async () => {
    expect(await sign({ secret, timestamp, rawBody: body })).toBe(signature);
    const envelope = JSON.parse(body) as { id: string };
    const headers = { 'Svc-Delivery': envelope.id, 'Svc-Timestamp': timestamp, 'Svc-Signature': signature };
    const now = Number(timestamp) * 1000;
    await expect(verifyDelivery({ secret, headers, rawBody: body, now })).resolves.toEqual(envelope);
  });

  it('states the body length and the sample request headers that match the example', () => {
    expect(doc).toContain(`one line of ${Buffer.byteLength(body)} bytes`);
    expect(doc).toContain(`Svc-Signature: ${signature}`);
    expect(doc).toContain(`Svc-Timestamp: ${timestamp}`);
  });

  it('states the default tolerance', () => {
    expect(doc).toContain(`**${DEFAULT_TOLERANCE_SECONDS} seconds**`);
  });
});

describe('packages/sdk/README.md', () => {
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

  it('names every runtime export of svc-sdk/verify, svc-sdk/verify/postgres and svc-sdk/verify/redis', async () => {
    const modules = [
      await import('../src/verify/index.js'),
      await import('../src/verify/postgres-store.js'),
      await import('../src/verify/redis-store.js'),
    ];
    for (const name of modules.flatMap((m) => Object.keys(m))) expect(readme, name).toContain(`\`${name}\``);
  });
});
