import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * CORS for the public API only: browsers on the configured origins may call /api/v1 with a bearer token.
 * Credentials (cookies) are never allowed, and /admin never answers CORS: the admin session is same-origin only.
 * A disallowed origin gets no CORS header at all, so the browser refuses to hand it the answer.
 */
const ALLOW_METHODS = 'GET, HEAD, POST, PATCH, DELETE';
// Last-Event-ID: a browser resumes the event stream with it, through fetch (SPEC §7).
const ALLOW_HEADERS = 'Authorization, Content-Type, If-Match, Idempotency-Key, Last-Event-ID, X-Request-ID';
const EXPOSE_HEADERS = 'X-Request-ID, ETag, Retry-After, WWW-Authenticate, Idempotent-Replayed';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

export type CorsHeaders = (request: FastifyRequest, reply: FastifyReply) => 'preflight' | 'continue';

export function corsHeaders(origins: readonly string[]): CorsHeaders {
  const allowed = new Set(origins);
  return (request, reply) => {
    if (allowed.size === 0 || !request.url.startsWith('/api/v1/')) return 'continue';
    // Answers differ by Origin: shared caches must key on it.
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (origin === undefined || !allowed.has(origin)) return 'continue';
    reply.header('access-control-allow-origin', origin);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      reply
        .header('access-control-allow-methods', ALLOW_METHODS)
        .header('access-control-allow-headers', ALLOW_HEADERS)
        .header('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS);
      return 'preflight';
    }
    reply.header('access-control-expose-headers', EXPOSE_HEADERS);
    return 'continue';
  };
}
