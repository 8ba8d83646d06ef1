import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/lib/crypto.js';

const keyHex = randomBytes(32).toString('hex');
const raw = Buffer.from(keyHex, 'hex');

/** A secret sealed the way every install before v2 did it: AES-256-GCM straight under SVC_SECRET_KEY. */
function sealV1(plain: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', raw, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

function openWith(key: Buffer, sealed: string, aad: string): string {
  const [, iv, tag, ct] = sealed.split('.');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv!, 'base64url'), { authTagLength: 16 });
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct!, 'base64url')), decipher.final()]).toString('utf8');
}

const hkdf = (info: string) => Buffer.from(hkdfSync('sha256', raw, Buffer.alloc(0), info, 32));

describe('SecretBox key separation', () => {
  const box = new SecretBox(keyHex);

  it('still opens a v1 secret sealed with the raw key (existing installs)', () => {
    expect(box.open(sealV1('whsec_old', 'wh_1'), 'wh_1')).toBe('whsec_old');
    expect(() => box.open(sealV1('whsec_old', 'wh_1'), 'wh_2')).toThrow();
  });

  it('seals new secrets as v2 under a derived key that the raw key does not open', () => {
    const sealed = box.seal('whsec_new', 'wh_1');
    expect(sealed.startsWith('v2.')).toBe(true);
    expect(box.open(sealed, 'wh_1')).toBe('whsec_new');
    expect(() => openWith(raw, sealed, 'wh_1')).toThrow();
    expect(openWith(hkdf('svc seal v2'), sealed, 'wh_1')).toBe('whsec_new');
  });

  it('refuses a tampered tag, a tampered ciphertext, a truncated tag and the wrong AAD', () => {
    const sealed = box.seal('whsec_new', 'wh_1');
    const [v, iv, tag, ct] = sealed.split('.') as [string, string, string, string];
    const flip = (b64: string) => {
      const b = Buffer.from(b64, 'base64url');
      b[0]! ^= 1;
      return b.toString('base64url');
    };
    expect(() => box.open([v, iv, flip(tag), ct].join('.'), 'wh_1')).toThrow();
    expect(() => box.open([v, iv, tag, flip(ct)].join('.'), 'wh_1')).toThrow();
    // GCM accepts short tags unless told the length: a 4-byte tag would be forgeable by trial.
    const short = Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url');
    expect(() => box.open([v, iv, short, ct].join('.'), 'wh_1')).toThrow();
    expect(() => box.open(sealed, 'wh_2')).toThrow();
    expect(() => box.open(sealed.replace(/^v2/, 'v1'), 'wh_1')).toThrow();
    expect(() => box.open(sealed.replace(/^v2/, 'v9'), 'wh_1')).toThrow();
  });

  it('keys CSRF tokens with their own derived key, neither the raw key nor the sealing key', () => {
    const value = 'session-token';
    const csrf = box.derive('csrf', value);
    const underRaw = createHmac('sha256', raw).update(`csrf\0${value}`).digest('base64url');
    const underRawPlain = createHmac('sha256', raw).update(value).digest('base64url');
    const underSeal = createHmac('sha256', hkdf('svc seal v2')).update(value).digest('base64url');
    expect(csrf).toBe(createHmac('sha256', hkdf('svc csrf v1')).update(value).digest('base64url'));
    expect(csrf).not.toBe(underRaw);
    expect(csrf).not.toBe(underRawPlain);
    expect(csrf).not.toBe(underSeal);
    expect(hkdf('svc csrf v1').equals(hkdf('svc seal v2'))).toBe(false);
    expect(box.derive('csrf', value)).toBe(csrf);
    expect(new SecretBox(randomBytes(32).toString('hex')).derive('csrf', value)).not.toBe(csrf);
  });

  it('keeps the fingerprint that existing installs stored', () => {
    // The value every earlier version stored in meta.secret_key_fingerprint; a change would refuse to start them.
    expect(box.fingerprint()).toBe(createHmac('sha256', raw).update('svc key check v1').digest('hex'));
  });
});
