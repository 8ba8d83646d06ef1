import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { hmacHex } from '../lib/crypto.js';
import type { SignatureScheme } from './targets-store.js';

/**
 * `Svc-Signature: v1=<hex>`; during a rotation's overlap `v1=<new> v1=<old>` (newest first). The key is the
 * secret exactly as shown (the whole `whsec_…` string, UTF-8); the message is `<timestamp>.<body>`.
 */
export function signatureHeader(secretsNewestFirst: readonly string[], timestamp: number, body: string | Buffer): string {
  // In two parts: `${timestamp}.${body}` would copy every body once more only to be hashed.
  const prefix = `${timestamp}.`;
  return secretsNewestFirst.map((s) => `v1=${hmacHex(s, prefix, body)}`).join(' ');
}

export const SECRET_PREFIX = 'whsec_';
export const PUBLIC_KEY_PREFIX = 'whpk_';

/**
 * A secret in the Standard Webhooks form: `whsec_` and the standard base64, padded, of 32 bytes (44 characters).
 * Secrets made before SPEC §13 are base64url without padding (43 characters): every library of other languages
 * decodes the part after `whsec_` as standard base64, so those cannot sign the `standard` scheme.
 */
const STANDARD_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
export const isStandardSecret = (secret: string): boolean => STANDARD_SECRET.test(secret);

/** An opened HMAC secret: as shown (the svc scheme's key) and, in the standard form, its decoded bytes. */
export interface HmacKey {
  secret: string;
  /** Null for a secret of the old alphabet: it signs the svc scheme only. */
  standardKey: Buffer | null;
}

export const hmacKey = (secret: string): HmacKey => ({
  secret,
  standardKey: isStandardSecret(secret) ? Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64') : null,
});

/** The keys that sign a target's attempts now, newest first. */
export type SigningKeys = { algorithm: 'hmac-sha256'; keys: HmacKey[] } | { algorithm: 'ed25519'; keys: KeyObject[] };

/**
 * An ed25519 key pair: the private key as sealed (PKCS#8 DER, base64) and the public key as shown: `whpk_` and the
 * standard base64, padded, of its 32 raw bytes.
 */
export function newKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'), publicKey: `${PUBLIC_KEY_PREFIX}${raw.toString('base64')}` };
}

export const openPrivateKey = (pkcs8Base64: string): KeyObject => createPrivateKey({ key: Buffer.from(pkcs8Base64, 'base64'), format: 'der', type: 'pkcs8' });

/** The `whpk_…` form of a public key, for tests and receivers: `createPublicKey` of the raw 32 bytes. */
export const publicKeyFromShown = (shown: string): KeyObject =>
  createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(shown.slice(PUBLIC_KEY_PREFIX.length), 'base64').toString('base64url') }, format: 'jwk' });

/**
 * `webhook-signature` (Standard Webhooks v1/v1a): one entry per key, newest first, separated by a space; the message is
 * `<webhook-id>.<webhook-timestamp>.<body>`. An old-alphabet secret adds no entry (see isStandardSecret).
 */
export function standardSignature(signing: SigningKeys, id: string, timestamp: number, body: string | Buffer): string {
  const prefix = `${id}.${timestamp}.`;
  if (signing.algorithm === 'ed25519') {
    // ed25519 signs the message whole (no streaming API): the one copy of the body it costs is unavoidable.
    const message = Buffer.concat([Buffer.from(prefix), typeof body === 'string' ? Buffer.from(body) : body]);
    return signing.keys.map((key) => `v1a,${sign(null, message, key).toString('base64')}`).join(' ');
  }
  const entries: string[] = [];
  for (const { standardKey } of signing.keys) {
    if (standardKey === null) continue;
    entries.push(`v1,${createHmac('sha256', standardKey).update(prefix).update(body).digest('base64')}`);
  }
  return entries.join(' ');
}

/** The signature headers of one attempt, by scheme (SPEC §5, §13). */
export function signatureHeaders(scheme: SignatureScheme, signing: SigningKeys, id: string, timestamp: number, body: string | Buffer): Record<string, string> {
  const headers: Record<string, string> = {};
  if (scheme !== 'standard' && signing.algorithm === 'hmac-sha256') {
    headers['svc-delivery'] = id;
    headers['svc-timestamp'] = String(timestamp);
    headers['svc-signature'] = signatureHeader(
      signing.keys.map((k) => k.secret),
      timestamp,
      body,
    );
  }
  if (scheme !== 'svc') {
    headers['webhook-id'] = id;
    headers['webhook-timestamp'] = String(timestamp);
    headers['webhook-signature'] = standardSignature(signing, id, timestamp, body);
  }
  return headers;
}
