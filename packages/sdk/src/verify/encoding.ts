// Standard base64 (RFC 4648 §4: `+` and `/`, `=` padding), written out because the runtimes svc-sdk/verify supports
// do not all have `atob`/`btoa` or `Buffer` (a bare edge realm has neither), and `atob` works on binary strings.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;
const PAD = 61; // '='

export function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]!;
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63]! : '=';
    out += i + 2 < bytes.length ? ALPHABET[n & 63]! : '=';
  }
  return out;
}

/**
 * The bytes of standard base64 text, or null when it is not that: another alphabet (base64url's `-`/`_`), spaces,
 * `=` anywhere but at the end, or a length that is not a multiple of 4 (unless `paddingOptional`, for secrets that
 * someone may have pasted without their `=`, as Python's library tolerates).
 */
export function fromBase64(text: string, paddingOptional = false): Uint8Array<ArrayBuffer> | null {
  let s = text;
  if (paddingOptional && s.length % 4 !== 0) s += '='.repeat(4 - (s.length % 4));
  if (s.length % 4 !== 0) return null;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((s.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < s.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = s.charCodeAt(i + j);
      const padding = c === PAD && i + 4 === s.length && j >= 4 - pad;
      const v = padding ? 0 : c < 128 ? VALUE[c]! : -1;
      if (v < 0) return null;
      n = (n << 6) | v;
    }
    out[o++] = n >> 16;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}
