import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** Constant-time equality of two strings; unequal lengths still cost a comparison. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** HMAC-SHA256 of the parts in order, as one message; in parts, a long message need not be copied into one string. */
export function hmacHex(key: string | Buffer, ...message: ReadonlyArray<string | Buffer>): string {
  const mac = createHmac('sha256', key);
  for (const part of message) mac.update(part);
  return mac.digest('hex');
}

// GCM would otherwise accept a tag as short as 4 bytes on open, which makes forging one a matter of trials.
const TAG_BYTES = 16;
// The key is 32 random bytes already, so a salt adds no strength (RFC 5869 §3.1); the `info` string is what keeps
// the purposes apart. Changing either string changes the key: it would make every stored v2 secret unreadable.
const NO_SALT = Buffer.alloc(0);
const SEAL_INFO = 'svc seal v2';
const deriveKey = (key: Buffer, info: string): Buffer => Buffer.from(hkdfSync('sha256', key, NO_SALT, info, 32));

/**
 * AES-256-GCM for secrets at rest (webhook signing secrets). The stored form is `<version>.<iv>.<tag>.<ciphertext>`
 * in base64url, so a database dump alone reveals nothing. The record's id is bound as associated data: a ciphertext
 * copied to another row fails to open.
 *
 * Each purpose has its own key derived from SVC_SECRET_KEY with HKDF, so a key never serves both AES-GCM and HMAC.
 * `v2` is sealed under the derived sealing key; `v1` (every install before key separation) was sealed under the raw
 * key and is still opened, so an upgrade reads its secrets as before. A v1 secret is replaced by v2 when it is rotated.
 */
export class SecretBox {
  private readonly key: Buffer;
  private readonly sealKey: Buffer;
  private readonly purposeKeys = new Map<string, Buffer>();
  constructor(keyHex: string) {
    this.key = Buffer.from(keyHex, 'hex');
    if (this.key.length !== 32) throw new Error('secret key must be 32 bytes');
    this.sealKey = deriveKey(this.key, SEAL_INFO);
  }

  seal(plain: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v2', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string, aad: string): string {
    const [version, iv, tag, ct, extra] = sealed.split('.');
    const key = version === 'v2' ? this.sealKey : version === 'v1' ? this.key : null;
    if (key === null || !iv || !tag || ct === undefined || extra !== undefined) throw new Error('unreadable sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }

  /**
   * A value derived from the key, stored once, so a start with the wrong key is caught before any secret is used.
   * Deliberately still an HMAC under the raw key: every install stored this value, and a different one would
   * refuse to start them. It reveals nothing about the derived keys (HMAC of a fixed label).
   */
  fingerprint(): string {
    return hmacHex(this.key, 'svc key check v1');
  }

  /** Keyed derivation for other purposes (CSRF tokens: `derive('csrf', …)`), each under its own HKDF key. */
  derive(purpose: string, value: string): string {
    let key = this.purposeKeys.get(purpose);
    if (key === undefined) {
      key = deriveKey(this.key, `svc ${purpose} v1`);
      this.purposeKeys.set(purpose, key);
    }
    return createHmac('sha256', key).update(value).digest('base64url');
  }
}
