import { AppError } from '../errors.js';
import type { SecretBox } from '../lib/crypto.js';

/** At most this many static headers per target (SPEC §13). */
export const MAX_STATIC_HEADERS = 20;
export const MAX_HEADER_VALUE_BYTES = 1024;
/** A name's length: the API's schema says so for keys, but a record's key schema is not applied to its keys (TypeBox). */
export const MAX_HEADER_NAME_LENGTH = 256;

// RFC 9110 §5.6.2: a token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Visible ASCII and spaces (SPEC §13): no tab, no control character, nothing that could end the line.
const VALUE = /^[\x20-\x7e]*$/;
/** Names svc sets, or that would change how the request is framed, routed or traced. */
const REFUSED = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'upgrade', 'te', 'trailer', 'keep-alive', 'expect', 'user-agent', 'traceparent', 'tracestate']);
const REFUSED_PREFIXES = ['proxy-', 'svc-', 'webhook-'];

function headerProblem(name: string, value: unknown): string | null {
  if (!TOKEN.test(name)) return 'is not a header name (RFC 9110 token characters only)';
  if (name.length > MAX_HEADER_NAME_LENGTH) return `must be at most ${MAX_HEADER_NAME_LENGTH} characters`;
  // A token, but a JavaScript object's prototype where headers pass through objects (a client's, a broker's): it was
  // accepted and shown, then never sent.
  if (name === '__proto__') return 'is reserved';
  const lower = name.toLowerCase();
  if (REFUSED.has(lower) || REFUSED_PREFIXES.some((p) => lower.startsWith(p))) return 'is set by svc or by HTTP itself and cannot be given';
  if (typeof value !== 'string') return 'must be a string';
  if (!VALUE.test(value)) return 'may hold visible ASCII characters and spaces only';
  if (Buffer.byteLength(value) > MAX_HEADER_VALUE_BYTES) return `must be at most ${MAX_HEADER_VALUE_BYTES} bytes`;
  return null;
}

/**
 * Checks a target's static headers; throws `validation_failed` with one error per refused header at `/headers/<name>`
 * (a name that differs from another only in case is refused too: HTTP would send both).
 */
export function checkStaticHeaders(headers: Record<string, unknown>): Record<string, string> {
  const names = Object.keys(headers);
  const errors: Array<{ path: string; message: string }> = [];
  if (names.length > MAX_STATIC_HEADERS) errors.push({ path: '/headers', message: `at most ${MAX_STATIC_HEADERS} headers` });
  const seen = new Set<string>();
  for (const name of names) {
    const path = `/headers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const problem = headerProblem(name, headers[name]);
    if (problem) errors.push({ path, message: problem });
    else if (seen.has(name.toLowerCase())) errors.push({ path, message: 'is given twice (header names are case-insensitive)' });
    seen.add(name.toLowerCase());
  }
  if (errors.length > 0) throw new AppError('validation_failed', 'The static headers are not acceptable.', { errors });
  return headers as Record<string, string>;
}

/**
 * How answers show a value: `…` and its last four characters. A value of fewer than 8 characters shows `…` alone:
 * its last four would be half of it or more.
 */
export const maskHeaderValue = (value: string): string => (value.length >= 8 ? `…${value.slice(-4)}` : '…');

/** What the store keeps: the object sealed as a whole (bound to the target), and its masked view. */
export function sealStaticHeaders(box: SecretBox, targetId: string, headers: Record<string, string> | null): { headersSealed: string | null; headersShown: Record<string, string> | null } {
  if (headers === null || Object.keys(headers).length === 0) return { headersSealed: null, headersShown: null };
  const shown = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, maskHeaderValue(value)]));
  return { headersSealed: box.seal(JSON.stringify(headers), `${targetId}:headers`), headersShown: shown };
}

export const openStaticHeaders = (box: SecretBox, targetId: string, sealed: string | null): Record<string, string> =>
  sealed === null ? {} : (JSON.parse(box.open(sealed, `${targetId}:headers`)) as Record<string, string>);
