import { describe, expect, it } from 'vitest';
import { WebhookVerificationError, verifyDelivery, type VerifyDeliveryOptions } from '../src/verify/index.js';
import { OLD_SECRET, SECRET, nowSeconds, signedDelivery, v1 } from './helpers/deliveries.js';

async function codeOf(options: VerifyDeliveryOptions): Promise<string> {
  try {
    await verifyDelivery(options);
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).code;
  }
  return 'ok';
}

const T = 1767225600;
const NOW = T * 1000;

function withHeader(headers: Record<string, string>, name: string, value: string | undefined) {
  const copy: Record<string, string> = { ...headers };
  if (value === undefined) delete copy[name];
  else copy[name] = value;
  return copy;
}

describe('verifyDelivery: accepts', () => {
  it('a signed delivery and returns the parsed envelope', async () => {
    const d = signedDelivery({ timestamp: T });
    const envelope = await verifyDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body, now: NOW });
    expect(envelope).toEqual(JSON.parse(d.body));
    expect(envelope.id).toBe(d.id);
    if (envelope.topic === 'record.updated') expect(envelope.payload.previous.version).toBe(1);
    else expect.fail('topic');
  });

  it('string, Buffer and Uint8Array bodies', async () => {
    const d = signedDelivery({ timestamp: T });
    for (const rawBody of [d.body, Buffer.from(d.body), new TextEncoder().encode(d.body)]) {
      await expect(verifyDelivery({ secret: SECRET, headers: d.headers, rawBody, now: NOW })).resolves.toBeTruthy();
    }
  });

  it('header names in any letter case, array values, and a Fetch Headers instance', async () => {
    const d = signedDelivery({ timestamp: T });
    const odd = {
      'SVC-DELIVERY': d.id,
      'sVc-TiMeStAmP': [String(T)],
      'Svc-signature': d.headers['svc-signature']!,
    };
    expect(await codeOf({ secret: SECRET, headers: odd, rawBody: d.body, now: NOW })).toBe('ok');
    expect(await codeOf({ secret: SECRET, headers: new Headers(d.headers), rawBody: d.body, now: NOW })).toBe('ok');
  });

  it('timestamps 299 s and exactly 300 s away in both directions; `now` as a Date', async () => {
    for (const offset of [-300, -299, 0, 299, 300]) {
      const d = signedDelivery({ timestamp: T + offset });
      expect(await codeOf({ secret: SECRET, headers: d.headers, rawBody: d.body, now: new Date(NOW) })).toBe('ok');
    }
  });

  it('the real clock when `now` is omitted', async () => {
    const d = signedDelivery({ timestamp: nowSeconds() });
    expect(await codeOf({ secret: SECRET, headers: d.headers, rawBody: d.body })).toBe('ok');
  });

  it('during a rotation: either header entry, with either secret listed first', async () => {
    const both = signedDelivery({ timestamp: T, secrets: [SECRET, OLD_SECRET] });
    const reversed = signedDelivery({ timestamp: T, secrets: [OLD_SECRET, SECRET], id: both.id, body: both.body });
    for (const d of [both, reversed]) {
      for (const secrets of [[SECRET], [OLD_SECRET], [SECRET, OLD_SECRET], [OLD_SECRET, SECRET]]) {
        expect(await codeOf({ secrets, headers: d.headers, rawBody: d.body, now: NOW })).toBe('ok');
      }
    }
    // A receiver holding both secrets accepts a single-entry header signed by either.
    for (const signer of [SECRET, OLD_SECRET]) {
      const d = signedDelivery({ timestamp: T, secrets: [signer] });
      expect(await codeOf({ secret: SECRET, secrets: [OLD_SECRET], headers: d.headers, rawBody: d.body, now: NOW })).toBe(
        'ok',
      );
    }
  });

  it('ignores entries of unknown schemes', async () => {
    const d = signedDelivery({ timestamp: T });
    const headers = withHeader(d.headers, 'svc-signature', `v2=whatever ${d.headers['svc-signature']} v0=abc`);
    expect(await codeOf({ secret: SECRET, headers, rawBody: d.body, now: NOW })).toBe('ok');
  });

  it('a signature header sent twice (joined by Headers with ", ")', async () => {
    const d = signedDelivery({ timestamp: T });
    const h = new Headers({ 'svc-delivery': d.id, 'svc-timestamp': String(T) });
    h.append('svc-signature', v1(OLD_SECRET, T, d.body));
    h.append('svc-signature', d.headers['svc-signature']!);
    expect(await codeOf({ secret: SECRET, headers: h, rawBody: d.body, now: NOW })).toBe('ok');
  });
});

describe('verifyDelivery: refuses', () => {
  const d = signedDelivery({ timestamp: T });
  const verify = (headers: Record<string, string | string[]>, rawBody: string | Uint8Array = d.body) =>
    codeOf({ secret: SECRET, headers, rawBody, now: NOW });

  it('missing_header for each absent or empty header', async () => {
    for (const name of ['svc-delivery', 'svc-timestamp', 'svc-signature']) {
      expect(await verify(withHeader(d.headers, name, undefined))).toBe('missing_header');
      expect(await verify(withHeader(d.headers, name, ''))).toBe('missing_header');
    }
    expect(await verify({})).toBe('missing_header');
    // Presence is checked for all three before any format.
    const { 'svc-signature': _, ...unsigned } = d.headers;
    expect(await verify({ ...unsigned, 'svc-timestamp': 'x', 'svc-delivery': ['del_a', 'del_b'] })).toBe(
      'missing_header',
    );
  });

  it('malformed_header for bad formats', async () => {
    for (const ts of ['1767225600.0', '-1767225600', ' 1767225600', '1e9', 'abc', '17672256001767225600']) {
      expect(await verify(withHeader(d.headers, 'svc-timestamp', ts)), ts).toBe('malformed_header');
    }
    for (const sig of ['abc', ' ', ' , ', '=abc', 'v1=', 'v1=xyz', `v1=${'a'.repeat(63)}`, `v1=${'a'.repeat(65)}`]) {
      expect(await verify(withHeader(d.headers, 'svc-signature', sig)), sig).toBe('malformed_header');
    }
    for (const id of ['abc', 'rec_123', 'del_', 'del_a b', 'del_é']) {
      expect(await verify(withHeader(d.headers, 'svc-delivery', id)), id).toBe('malformed_header');
    }
    // Two different timestamps cannot both be the one that was signed.
    expect(await verify({ ...d.headers, 'svc-timestamp': [String(T), String(T + 1)] })).toBe('malformed_header');
  });

  it('timestamp_stale 301 s in the past or the future, and with a smaller tolerance', async () => {
    for (const offset of [-301, 301, -86400, 86400]) {
      const s = signedDelivery({ timestamp: T + offset });
      expect(await codeOf({ secret: SECRET, headers: s.headers, rawBody: s.body, now: NOW })).toBe('timestamp_stale');
    }
    const s = signedDelivery({ timestamp: T - 31 });
    const options = { secret: SECRET, headers: s.headers, rawBody: s.body, now: NOW };
    expect(await codeOf({ ...options, toleranceSeconds: 30 })).toBe('timestamp_stale');
    expect(await codeOf({ ...options, toleranceSeconds: 31 })).toBe('ok');
  });

  it('timestamp_stale before signature_mismatch: an old replay learns nothing about the signature', async () => {
    const s = signedDelivery({ timestamp: T - 1000 });
    expect(await codeOf({ secret: 'whsec_wrong', headers: s.headers, rawBody: s.body, now: NOW })).toBe(
      'timestamp_stale',
    );
  });

  it('signature_mismatch for another secret, only unknown schemes, or a signature over another timestamp', async () => {
    expect(await codeOf({ secret: 'whsec_other', headers: d.headers, rawBody: d.body, now: NOW })).toBe(
      'signature_mismatch',
    );
    expect(await verify(withHeader(d.headers, 'svc-signature', `v2=${'a'.repeat(64)}`))).toBe('signature_mismatch');
    expect(await verify(withHeader(d.headers, 'svc-timestamp', String(T + 1)))).toBe('signature_mismatch');
    // The signature uppercased is still the same bytes; flipping one digit is not.
    const hex = d.headers['svc-signature']!.slice(3);
    expect(await verify(withHeader(d.headers, 'svc-signature', `v1=${hex.toUpperCase()}`))).toBe('ok');
    const flipped = (hex[0] === '0' ? '1' : '0') + hex.slice(1);
    expect(await verify(withHeader(d.headers, 'svc-signature', `v1=${flipped}`))).toBe('signature_mismatch');
  });

  it('signature_mismatch for a body that differs by one byte, by whitespace, or re-serialized', async () => {
    const bytes = Buffer.from(d.body);
    for (const i of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const tampered = Buffer.from(bytes);
      tampered[i] = tampered[i]! ^ 0x01;
      expect(await verify(d.headers, tampered)).toBe('signature_mismatch');
    }
    expect(await verify(d.headers, `${d.body}\n`)).toBe('signature_mismatch');
    expect(await verify(d.headers, ` ${d.body}`)).toBe('signature_mismatch');
    expect(await verify(d.headers, bytes.subarray(0, bytes.length - 1))).toBe('signature_mismatch');
    const parsed = JSON.parse(d.body) as Record<string, unknown>;
    expect(await verify(d.headers, JSON.stringify(parsed, null, 2))).toBe('signature_mismatch');
    const reordered = Object.fromEntries(Object.entries(parsed).reverse());
    expect(await verify(d.headers, JSON.stringify(reordered))).toBe('signature_mismatch');
    // Even the same key order and spacing differs once unicode is escaped the way some serializers do.
    const escaped = d.body.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    expect(escaped).not.toBe(d.body);
    expect(JSON.parse(escaped)).toEqual(parsed);
    expect(await verify(d.headers, escaped)).toBe('signature_mismatch');
  });

  it('malformed_body for a signed body that is not an envelope', async () => {
    const bodies = [
      'not json',
      '[]',
      'null',
      '{}',
      JSON.stringify({ ...JSON.parse(d.body), version: '2' }),
      JSON.stringify({ ...JSON.parse(d.body), version: 1 }),
      JSON.stringify({ ...JSON.parse(d.body), id: 'abc' }),
      JSON.stringify({ ...JSON.parse(d.body), topic: 7 }),
      JSON.stringify({ ...JSON.parse(d.body), recordId: undefined }),
      JSON.stringify({ ...JSON.parse(d.body), payload: 'x' }),
      JSON.stringify({ ...JSON.parse(d.body), payload: [] }),
    ];
    for (const body of bodies) {
      const s = signedDelivery({ timestamp: T, id: d.id, body });
      expect(await codeOf({ secret: SECRET, headers: s.headers, rawBody: s.body, now: NOW }), body).toBe(
        'malformed_body',
      );
    }
    const invalidUtf8 = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const s = signedDelivery({ timestamp: T, id: d.id });
    const headers = withHeader(s.headers, 'svc-signature', v1(SECRET, T, invalidUtf8));
    expect(await codeOf({ secret: SECRET, headers, rawBody: invalidUtf8, now: NOW })).toBe('malformed_body');
  });

  it('id_mismatch when Svc-Delivery differs from the signed envelope id', async () => {
    expect(await verify(withHeader(d.headers, 'svc-delivery', 'del_someoneelse'))).toBe('id_mismatch');
  });

  it('programmer errors are TypeErrors, not verification failures', async () => {
    await expect(verifyDelivery({ headers: d.headers, rawBody: d.body })).rejects.toThrow(TypeError);
    await expect(verifyDelivery({ secrets: [], headers: d.headers, rawBody: d.body })).rejects.toThrow(TypeError);
    await expect(verifyDelivery({ secret: '', headers: d.headers, rawBody: d.body })).rejects.toThrow(TypeError);
    await expect(
      verifyDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body, toleranceSeconds: -1 }),
    ).rejects.toThrow(TypeError);
    await expect(
      verifyDelivery({ secret: SECRET, headers: d.headers, rawBody: 42 as unknown as string }),
    ).rejects.toThrow(TypeError);
  });
});

describe('WebhookVerificationError', () => {
  it('maps codes to the status a receiver answers', () => {
    const status = (code: WebhookVerificationError['code']) => new WebhookVerificationError(code, '').status;
    expect(['missing_header', 'malformed_header', 'timestamp_stale', 'signature_mismatch'].map((c) => status(c as never)))
      .toEqual([401, 401, 401, 401]);
    expect(status('malformed_body')).toBe(400);
    expect(status('id_mismatch')).toBe(400);
    expect(new WebhookVerificationError('id_mismatch', 'x').name).toBe('WebhookVerificationError');
  });
});
