import { DestinationError } from '../destination-guard.js';
import type { FailureCode } from '../senders/sender.js';

/**
 * An HTTPS attempt's failure before any status line, named by a stable code with a short fixed message: the peer's
 * words, our headers and the body never reach the job's record.
 */

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);
const UNREACHABLE_CODES = new Set(['ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

export const errorCode = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** No route to this address family here: a dual-stack name's next checked address may work. */
export function isUnreachable(err: Error): boolean {
  return UNREACHABLE_CODES.has(errorCode(err) ?? '');
}

export function describeFailure(err: unknown, timeoutMs: number): { code: FailureCode; message: string } {
  if (err instanceof DestinationError) return { code: err.code, message: `${err.message}.` };
  // Errors may arrive wrapped (undici's `cause`); the innermost code is the telling one.
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = errorCode(e);
    if (code) codes.push(code);
  }
  const code = codes.find((c) => isTimeout(c) || isTls(c)) ?? codes.at(-1) ?? 'unknown';
  if (isTimeout(code)) return { code: 'timeout', message: `No response within ${timeoutMs} ms (${code}).` };
  if (isTls(code)) return { code: 'tls_failed', message: `The TLS handshake or the receiver's certificate failed (${code}).` };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { code: 'dns_failed', message: `The host could not be resolved (${code}).` };
  return { code: 'connection_failed', message: `The connection failed (${code}).` };
}

const isTimeout = (code: string): boolean => TIMEOUT_CODES.has(code);
const isTls = (code: string): boolean =>
  TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.startsWith('CERT_') || code.startsWith('SSL_');
