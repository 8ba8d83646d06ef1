/** The request body exactly as received. A Node `Buffer` is a `Uint8Array`. */
export type RawBody = string | Uint8Array | ArrayBuffer;

export const SIGNATURE_SCHEME = 'v1';

const encoder = new TextEncoder();

export function bodyBytes(rawBody: RawBody): Uint8Array {
  if (typeof rawBody === 'string') return encoder.encode(rawBody);
  if (ArrayBuffer.isView(rawBody)) return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  // toString rather than instanceof: an ArrayBuffer from another realm (worker, vm) fails instanceof.
  if (Object.prototype.toString.call(rawBody) === '[object ArrayBuffer]') return new Uint8Array(rawBody);
  throw new TypeError('rawBody must be a string, Uint8Array, Buffer or ArrayBuffer');
}

export function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('Web Crypto (globalThis.crypto.subtle) is not available in this runtime');
  return s;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

export async function hmacSha256(key: Uint8Array<ArrayBuffer>, message: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const k = await subtle().importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle().sign('HMAC', k, message));
}

/** HMAC-SHA256 over `<timestamp>.<body>`, keyed with the UTF-8 bytes of the whole secret string. */
export async function hmac(secret: string, timestamp: string, body: Uint8Array): Promise<Uint8Array> {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('a webhook secret must be a non-empty string');
  return hmacSha256(encoder.encode(secret), concatBytes(encoder.encode(`${timestamp}.`), body));
}

export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return hex;
}

export function fromHex(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** Constant time for equal lengths: every byte is visited whatever the first difference. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

export function timestampString(timestamp: number | string): string {
  const s = typeof timestamp === 'number' ? String(timestamp) : timestamp;
  if (!/^[0-9]+$/.test(s)) throw new TypeError('timestamp must be Unix seconds (digits only)');
  return s;
}

export interface SignOptions {
  secret: string;
  /** Unix seconds, as sent in `Svc-Timestamp`. */
  timestamp: number | string;
  rawBody: RawBody;
}

/** One `Svc-Signature` entry, `v1=<lowercase hex>`: what svc sends for this secret, timestamp and body. */
export async function sign({ secret, timestamp, rawBody }: SignOptions): Promise<string> {
  const digest = await hmac(secret, timestampString(timestamp), bodyBytes(rawBody));
  return `${SIGNATURE_SCHEME}=${toHex(digest)}`;
}
