import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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

export const hmacHex = (key: string | Buffer, message: string | Buffer): string =>
  createHmac('sha256', key).update(message).digest('hex');

/**
 * AES-256-GCM for secrets at rest (webhook signing secrets). The stored form is
 * `v1.<iv>.<tag>.<ciphertext>` in base64url, so a database dump alone reveals nothing.
 * The record's id is bound as associated data: a ciphertext copied to another row fails to open.
 */
export class SecretBox {
  private readonly key: Buffer;
  constructor(keyHex: string) {
    this.key = Buffer.from(keyHex, 'hex');
    if (this.key.length !== 32) throw new Error('secret key must be 32 bytes');
  }

  seal(plain: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string, aad: string): string {
    const [version, iv, tag, ct] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unreadable sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** A value derived from the key, stored once, so a start with the wrong key is caught before any secret is used. */
  fingerprint(): string {
    return hmacHex(this.key, 'svc key check v1');
  }

  /** Keyed derivation for other purposes (CSRF tokens), so one key never serves two roles directly. */
  derive(purpose: string, value: string): string {
    return createHmac('sha256', this.key).update(`${purpose}\0${value}`).digest('base64url');
  }
}
