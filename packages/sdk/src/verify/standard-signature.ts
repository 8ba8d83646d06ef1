import { fromBase64, toBase64 } from './encoding.js';
import { bodyBytes, concatBytes, hmacSha256, subtle, timestampString, type RawBody } from './signature.js';

// Standard Webhooks v1 (https://www.standardwebhooks.com): entries `v1,<base64 HMAC-SHA256>` keyed with the base64
// decoding of the secret after `whsec_`, and `v1a,<base64 ed25519>` checked with a `whpk_` public key, both over
// `<webhook-id>.<webhook-timestamp>.<body>`.

export const STANDARD_HMAC_SCHEME = 'v1';
export const STANDARD_ED25519_SCHEME = 'v1a';
const SECRET_PREFIX = 'whsec_';
const PUBLIC_KEY_PREFIX = 'whpk_';
export const HMAC_SHA256_BYTES = 32;
export const ED25519_SIGNATURE_BYTES = 64;
const ED25519_PUBLIC_KEY_BYTES = 32;

const encoder = new TextEncoder();

/**
 * The HMAC key of a secret as Standard Webhooks libraries derive it (the base64 after an optional `whsec_`), or null
 * when the rest is not base64: such a secret (one made before svc's secrets were base64) cannot have signed a `v1,`
 * entry, which is all that follows from it.
 */
export function standardSecretKey(secret: string): Uint8Array<ArrayBuffer> | null {
  const key = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, true);
  return key && key.length > 0 ? key : null;
}

/** The 32 raw bytes of a `whpk_…` public key; a malformed key is the receiver's configuration, so a TypeError. */
export function publicKeyBytes(publicKey: string): Uint8Array<ArrayBuffer> {
  const raw = typeof publicKey === 'string' && publicKey.startsWith(PUBLIC_KEY_PREFIX)
    ? fromBase64(publicKey.slice(PUBLIC_KEY_PREFIX.length))
    : null;
  if (raw?.length !== ED25519_PUBLIC_KEY_BYTES) {
    throw new TypeError('a public key must be whpk_ followed by the standard base64 of 32 bytes, as svc shows it');
  }
  return raw;
}

export function standardMessage(deliveryId: string, timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  return concatBytes(encoder.encode(`${deliveryId}.${timestamp}.`), body);
}

function noEd25519(error: unknown): Error {
  return new Error(
    "this runtime's Web Crypto has no Ed25519 (globalThis.crypto.subtle with { name: 'Ed25519' }), needed for v1a " +
      'signatures (Node >= 20.19 has it)',
    { cause: error },
  );
}

export async function importEd25519PublicKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  const webCrypto = subtle();
  try {
    return await webCrypto.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
  } catch (error) {
    // The 32 bytes were checked already; what is left to fail is the algorithm itself.
    throw noEd25519(error);
  }
}

export function verifyEd25519(
  key: CryptoKey,
  signature: Uint8Array<ArrayBuffer>,
  message: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  return subtle().verify({ name: 'Ed25519' }, key, signature, message);
}

export interface StandardSignOptions {
  /** A `whsec_…` secret in the standard form: gives a `v1,` entry. */
  secret?: string;
  /** An Ed25519 private key (`CryptoKey`, e.g. from `generateSigningKeyPair`): gives a `v1a,` entry. */
  privateKey?: CryptoKey;
  /** The delivery id, `del_…`, as sent in `webhook-id`. */
  deliveryId: string;
  /** Unix seconds, as sent in `webhook-timestamp`. */
  timestamp: number | string;
  rawBody: RawBody;
}

/** One `webhook-signature` entry: `v1,<base64>` for a secret, `v1a,<base64>` for a private key. */
export async function signStandard(options: StandardSignOptions): Promise<string> {
  const { secret, privateKey, deliveryId } = options;
  if ((secret === undefined) === (privateKey === undefined)) {
    throw new TypeError('signStandard needs exactly one of `secret` and `privateKey`');
  }
  if (typeof deliveryId !== 'string' || deliveryId === '') throw new TypeError('deliveryId must be a non-empty string');
  const message = standardMessage(deliveryId, timestampString(options.timestamp), bodyBytes(options.rawBody));
  if (secret !== undefined) {
    const key = typeof secret === 'string' ? standardSecretKey(secret) : null;
    if (!key) throw new TypeError('a Standard Webhooks secret is whsec_ followed by standard base64');
    return `${STANDARD_HMAC_SCHEME},${toBase64(await hmacSha256(key, message))}`;
  }
  const signature = await subtle().sign({ name: 'Ed25519' }, privateKey!, message);
  return `${STANDARD_ED25519_SCHEME},${toBase64(new Uint8Array(signature))}`;
}

/** A new secret in the form svc makes them: `whsec_` and the standard base64 (padded) of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + toBase64(globalThis.crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * A new Ed25519 key pair for a receiver's tests: `publicKey` as svc shows an ed25519 target's (`whpk_…`), for
 * `verifyDelivery`; `privateKey` for `signStandard` and `signedHeaders`.
 */
export async function generateSigningKeyPair(): Promise<{ publicKey: string; privateKey: CryptoKey }> {
  const webCrypto = subtle();
  let pair: CryptoKeyPair;
  try {
    pair = (await webCrypto.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  } catch (error) {
    throw noEd25519(error);
  }
  const raw = new Uint8Array(await webCrypto.exportKey('raw', pair.publicKey));
  return { publicKey: PUBLIC_KEY_PREFIX + toBase64(raw), privateKey: pair.privateKey };
}
