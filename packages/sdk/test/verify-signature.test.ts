import { describe, expect, it } from 'vitest';
import { sign, signedHeaders } from '../src/verify/index.js';
import { opensslHmacHex, signedMessage } from './helpers/openssl.js';

const vectors: Array<{ name: string; secret: string; timestamp: number; body: string | Uint8Array }> = [
  { name: 'ascii JSON', secret: 'whsec_abc123', timestamp: 1767225600, body: '{"version":"1","id":"del_1"}' },
  { name: 'unicode body', secret: 'whsec_ümlaut', timestamp: 1700000000, body: '{"t":"Grüße, 世界 🚀"}' },
  { name: 'body with a newline', secret: 'whsec_x', timestamp: 1, body: '{"a":1}\n{"b":2}\n' },
  { name: 'empty body', secret: 'whsec_empty', timestamp: 1767225600, body: '' },
  {
    name: 'binary bytes',
    secret: 'whsec_bin',
    timestamp: 1767225600,
    body: new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x0a, 0x0d, 0x80]),
  },
  {
    name: 'long secret (longer than the SHA-256 block)',
    secret: `whsec_${'k'.repeat(100)}`,
    timestamp: 9999999999,
    body: '{"x":"y"}',
  },
];

describe('sign: known answers from openssl', () => {
  for (const v of vectors) {
    it(v.name, async () => {
      const expected = await opensslHmacHex(v.secret, signedMessage(v.timestamp, v.body));
      expect(await sign({ secret: v.secret, timestamp: v.timestamp, rawBody: v.body })).toBe(`v1=${expected}`);
    });
  }

  it('treats string, Uint8Array, Buffer and ArrayBuffer bodies with the same bytes alike', async () => {
    const text = '{"t":"é\\n"}\n';
    const bytes = new TextEncoder().encode(text);
    const expected = `v1=${await opensslHmacHex('whsec_s', signedMessage(42, text))}`;
    const options = { secret: 'whsec_s', timestamp: '42' };
    expect(await sign({ ...options, rawBody: text })).toBe(expected);
    expect(await sign({ ...options, rawBody: bytes })).toBe(expected);
    expect(await sign({ ...options, rawBody: Buffer.from(text) })).toBe(expected);
    expect(await sign({ ...options, rawBody: bytes.buffer })).toBe(expected);
    // A view into a larger buffer signs only its own bytes.
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 4);
    expect(await sign({ ...options, rawBody: padded.subarray(4, 4 + bytes.length) })).toBe(expected);
  });

  it('refuses an empty secret and a timestamp that is not Unix seconds', async () => {
    await expect(sign({ secret: '', timestamp: 1, rawBody: '' })).rejects.toThrow(TypeError);
    await expect(sign({ secret: 'whsec_a', timestamp: '1.5', rawBody: '' })).rejects.toThrow(TypeError);
    await expect(sign({ secret: 'whsec_a', timestamp: -1, rawBody: '' })).rejects.toThrow(TypeError);
  });
});

describe('signedHeaders', () => {
  it('produces the headers svc sends, newest secret first', async () => {
    const body = '{"version":"1"}';
    const headers = await signedHeaders({
      secrets: ['whsec_new', 'whsec_old'],
      timestamp: 1767225600,
      rawBody: body,
      deliveryId: 'del_abc',
    });
    const newHex = await opensslHmacHex('whsec_new', signedMessage(1767225600, body));
    const oldHex = await opensslHmacHex('whsec_old', signedMessage(1767225600, body));
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'svc-webhooks/1',
      'Svc-Delivery': 'del_abc',
      'Svc-Timestamp': '1767225600',
      'Svc-Signature': `v1=${newHex} v1=${oldHex}`,
    });
  });
});
