import { hmacHex } from '../lib/crypto.js';

/**
 * `Svc-Signature: v1=<hex>`; during a rotation's overlap `v1=<new> v1=<old>` (newest first). The key is the
 * secret exactly as shown (the whole `whsec_…` string, UTF-8); the message is `<timestamp>.<body>`.
 */
export function signatureHeader(secretsNewestFirst: readonly string[], timestamp: number, body: string | Buffer): string {
  // In two parts: `${timestamp}.${body}` would copy every body once more only to be hashed.
  const prefix = `${timestamp}.`;
  return secretsNewestFirst.map((s) => `v1=${hmacHex(s, prefix, body)}`).join(' ');
}
