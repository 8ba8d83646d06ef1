import { createPublicKey, randomBytes, verify as cryptoVerify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64 } from '../src/verify/encoding.js';
import {
  generateSecret,
  generateSigningKeyPair,
  signStandard,
  signedHeaders,
  verifyDelivery,
} from '../src/verify/index.js';
import { deliveryId, envelopeBody, nowSeconds, v1 } from './helpers/deliveries.js';

/** A `whpk_…` key as a node:crypto KeyObject, the way docs/receiving-webhooks.md shows it. */
function nodePublicKey(whpk: string) {
  const x = Buffer.from(whpk.slice('whpk_'.length), 'base64').toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}

describe('standard base64', () => {
  it('encodes and decodes every length as Buffer does', () => {
    for (let n = 0; n <= 70; n++) {
      const bytes = randomBytes(n);
      const text = bytes.toString('base64');
      expect(toBase64(bytes)).toBe(text);
      expect(Buffer.from(fromBase64(text)!)).toEqual(bytes);
      expect(Buffer.from(fromBase64(text.replace(/=+$/, ''), true)!)).toEqual(bytes);
    }
  });

  it('refuses anything else, where Buffer would guess', () => {
    const refused = ['A', 'AB', 'ABC', '====', 'A===', 'AB=C', 'AB==AB==', 'ab-_', 'ab c', 'abé=', 'ab\ncd==', 'AAAA='];
    for (const text of refused) expect(fromBase64(text), text).toBeNull();
    expect(fromBase64('A', true)).toBeNull();
    expect(fromBase64('')).toEqual(new Uint8Array());
  });
});

describe('signStandard and signedHeaders: what they produce verifies with standardwebhooks', () => {
  it('signStandard gives exactly the entry Webhook.sign gives', async () => {
    for (let i = 0; i < 5; i++) {
      const secret = generateSecret();
      const id = deliveryId();
      const body = envelopeBody(id, { n: i, text: 'Grüße ✓' });
      const timestamp = 1767225600 + i;
      const expected = new Webhook(secret).sign(id, new Date(timestamp * 1000), body);
      expect(await signStandard({ secret, deliveryId: id, timestamp, rawBody: body })).toBe(expected);
      const fromBuffer = { secret, deliveryId: id, timestamp: String(timestamp), rawBody: Buffer.from(body) };
      expect(await signStandard(fromBuffer)).toBe(expected);
    }
  });

  it("signedHeaders 'standard', with a rotation's two secrets, verifies with Webhook.verify under either", async () => {
    const [current, previous] = [generateSecret(), generateSecret()];
    const id = deliveryId();
    const body = envelopeBody(id);
    const headers = await signedHeaders({
      secrets: [current, previous],
      timestamp: nowSeconds(),
      rawBody: body,
      deliveryId: id,
      signatureScheme: 'standard',
    });
    expect(Object.keys(headers).sort()).toEqual(
      ['Content-Type', 'User-Agent', 'webhook-id', 'webhook-signature', 'webhook-timestamp'].sort(),
    );
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    }
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow(/No matching signature/);
    await expect(verifyDelivery({ secret: previous, headers, rawBody: body })).resolves.toMatchObject({ id });
  });

  it("signedHeaders 'both': the svc headers as before and the standard ones, each verified independently", async () => {
    const secret = generateSecret();
    const id = deliveryId();
    const body = envelopeBody(id);
    const timestamp = nowSeconds();
    const options = { secrets: [secret], timestamp, rawBody: body, deliveryId: id };
    const headers = await signedHeaders({ ...options, signatureScheme: 'both' });
    expect(headers['Svc-Signature']).toBe(v1(secret, timestamp, body));
    expect(headers['Svc-Delivery']).toBe(id);
    expect(headers['webhook-id']).toBe(id);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    const svcOnly = await signedHeaders(options);
    expect(Object.keys(svcOnly).some((k) => k.startsWith('webhook-'))).toBe(false);
  });

  it('generateSecret makes secrets in svc form: whsec_ and the padded base64 of 32 bytes', () => {
    const secrets = new Set(Array.from({ length: 20 }, generateSecret));
    expect(secrets.size).toBe(20);
    for (const s of secrets) {
      expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    }
  });

  it('ed25519: a v1a entry of signStandard verifies with node:crypto and the whpk_ public key', async () => {
    const { publicKey, privateKey } = await generateSigningKeyPair();
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const id = deliveryId();
    const body = envelopeBody(id);
    const entry = await signStandard({ privateKey, deliveryId: id, timestamp: 1767225600, rawBody: body });
    expect(entry).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const signature = Buffer.from(entry.slice(4), 'base64');
    const message = Buffer.from(`${id}.1767225600.${body}`);
    expect(cryptoVerify(null, message, nodePublicKey(publicKey), signature)).toBe(true);
    const later = Buffer.from(`${id}.1767225601.${body}`);
    expect(cryptoVerify(null, later, nodePublicKey(publicKey), signature)).toBe(false);
  });

  it('ed25519: signedHeaders with privateKeys gives a delivery that verifies with the public key', async () => {
    const [a, b] = [await generateSigningKeyPair(), await generateSigningKeyPair()];
    const id = deliveryId();
    const body = envelopeBody(id);
    const headers = await signedHeaders({
      privateKeys: [a.privateKey, b.privateKey],
      timestamp: nowSeconds(),
      rawBody: body,
      deliveryId: id,
      signatureScheme: 'standard',
    });
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const key of [a, b]) {
      await expect(verifyDelivery({ publicKey: key.publicKey, headers, rawBody: body })).resolves.toMatchObject({ id });
    }
    const stranger = await generateSigningKeyPair();
    await expect(verifyDelivery({ publicKey: stranger.publicKey, headers, rawBody: body })).rejects.toMatchObject({
      code: 'signature_mismatch',
    });
  });

  it('refuses what svc would never send, as TypeErrors', async () => {
    const { privateKey } = await generateSigningKeyPair();
    const base = { timestamp: 1, rawBody: '{}', deliveryId: 'del_x' };
    await expect(signedHeaders({ ...base, privateKeys: [privateKey] })).rejects.toThrow(TypeError);
    const both = { ...base, privateKeys: [privateKey], signatureScheme: 'both' } as const;
    await expect(signedHeaders(both)).rejects.toThrow(TypeError);
    await expect(signedHeaders({ ...base, signatureScheme: 'standard' })).rejects.toThrow(TypeError);
    await expect(signedHeaders({ ...base, secrets: ['whsec_a'], signatureScheme: 'other' as never })).rejects.toThrow(
      TypeError,
    );
    await expect(signStandard({ ...base, secret: 'whsec_not base64!' })).rejects.toThrow(TypeError);
    await expect(signStandard({ ...base, secret: generateSecret(), privateKey })).rejects.toThrow(TypeError);
    await expect(signStandard({ ...base })).rejects.toThrow(TypeError);
  });
});
