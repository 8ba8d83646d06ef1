/**
 * The security headers every response carries. They used to come from @fastify/helmet, which builds helmet's
 * middleware anew on every request (the CSP parsed and serialised each time: about 5% of the CPU of a small record
 * list). The values never change, so they are fixed here, the same set and values as helmet 8 gave with svc's
 * options: this CSP, no Cross-Origin-Embedder-Policy, Strict-Transport-Security only behind an https public URL.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join(';');

export function securityHeaders(publicUrl: string): Readonly<Record<string, string>> {
  return Object.freeze({
    'content-security-policy': CSP,
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    'referrer-policy': 'no-referrer',
    ...(publicUrl.startsWith('https:') ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
    'x-content-type-options': 'nosniff',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-frame-options': 'SAMEORIGIN',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  });
}
