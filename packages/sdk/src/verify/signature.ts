import { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './headers.js';

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

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('Web Crypto (globalThis.crypto.subtle) is not available in this runtime');
  return s;
}

/** HMAC-SHA256 over `<timestamp>.<body>`, keyed with the UTF-8 bytes of the whole secret string. */
export async function hmac(secret: string, timestamp: string, body: Uint8Array): Promise<Uint8Array> {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('a webhook secret must be a non-empty string');
  const prefix = encoder.encode(`${timestamp}.`);
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix, 0);
  message.set(body, prefix.length);
  const key = await subtle().importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return new Uint8Array(await subtle().sign('HMAC', key, message));
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

function timestampString(timestamp: number | string): string {
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

export interface SignedHeadersOptions {
  /** Newest first, as svc orders them during a rotation. */
  secrets: readonly string[];
  timestamp: number | string;
  rawBody: RawBody;
  deliveryId: string;
}

/** The headers of a delivery as svc would send them; for receivers' own tests. */
export async function signedHeaders(options: SignedHeadersOptions): Promise<Record<string, string>> {
  const { secrets, timestamp, rawBody, deliveryId } = options;
  const entries = await Promise.all(secrets.map((secret) => sign({ secret, timestamp, rawBody })));
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'svc-webhooks/1',
    [DELIVERY_HEADER]: deliveryId,
    [TIMESTAMP_HEADER]: timestampString(timestamp),
    [SIGNATURE_HEADER]: entries.join(' '),
  };
}
