import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { adminScopeFor, adminTokenRefusal } from '../auth/admin-scopes.js';
import type { AdminToken } from '../auth/admin-tokens-store.js';
import { ADMIN_TOKEN_PREFIX, authenticateAdminToken } from '../auth/admin-tokens.js';
import type { ApiToken } from '../auth/api-tokens-store.js';
import { csrfMatches, resolveSession, type ActiveSession } from '../auth/sessions.js';
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { errorResponses } from './schemas.js';
import type { Collection } from '../records/collections-store.js';

export const SESSION_COOKIE = 'svc_admin';

/** Per-request auth results; set by the admin hook below and the public routes' (bearer-auth.ts), read by handlers. */
export interface RequestAuth {
  session?: ActiveSession;
  /** Admin routes called with `Authorization: Bearer svcadm_…` instead of a session (SPEC §16). */
  adminToken?: AdminToken;
  /** The admin token as presented, for an event stream's re-checks. */
  adminTokenValue?: string;
  token?: ApiToken;
  /** A record route's collection (http/bearer-auth.ts): the token may use it, and it exists. */
  collection?: Collection;
  /** The feed's: the collections the token reads, those its query names or else all of its own (null: every one). */
  collections?: readonly string[] | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: RequestAuth;
  }
  interface FastifyContextConfig {
    /** Admin routes: 'none' (login, setup), 'cookie' (GET session), default cookie + CSRF. */
    adminAuth?: 'none' | 'cookie';
  }
}

/**
 * Every admin route, login and setup included: a browser request from another origin is refused
 * before anything else, so a cross-site form cannot even try a password.
 */
function checkOrigin(ctx: Context, request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== ctx.config.publicUrl) throw new AppError('csrf_failed', 'Cross-origin requests are refused.');
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') throw new AppError('csrf_failed', 'Cross-site requests are refused.');
}

/**
 * `Authorization: Bearer svcadm_…` on an admin route: who (401, rate-limited as logins are), then what (403 when the
 * route is not for tokens or the token lacks its scope; auth/admin-scopes.ts decides). No cookie and no CSRF token:
 * a browser never sends this header by itself, so there is no cross-site request to guard against.
 */
async function adminTokenAuth(ctx: Context, request: FastifyRequest, reply: FastifyReply, header: string): Promise<void> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  // Any other Authorization is refused rather than ignored: a client that meant to send a token must not be
  // answered as if it had sent nothing, nor fall through to a cookie it did not mean to use.
  if (!m || !m[1]!.startsWith(ADMIN_TOKEN_PREFIX)) refuseBearer(reply, 'invalid');
  const presented = m[1]!;
  const token = await authenticateAdminToken(ctx, presented, request.ip);
  if (!token) refuseBearer(reply, 'invalid');
  const refusal = adminTokenRefusal(token.scopes, request.method, request.routeOptions.url ?? '');
  if (refusal) throw refusal;
  request.auth = { adminToken: token, adminTokenValue: presented };
}

/**
 * onRoute, on the admin routes: a route a token may use lists `adminToken` with the scope it needs beside the session
 * in its OpenAPI `security` (OpenAPI 3.1 allows role names for non-OAuth schemes). Written from the same policy the
 * hook above enforces, so the document cannot drift from the check; a route that states no security is left alone.
 */
export function documentAdminTokenSecurity(route: RouteOptions): void {
  const schema = route.schema as { security?: Array<Record<string, string[]>>; response?: Record<string, unknown> } | undefined;
  if (!schema?.security) return;
  for (const method of [route.method].flat()) {
    const scope = adminScopeFor(method, route.url);
    if (scope === null || method === 'HEAD') continue;
    // A new array and object: route files share their `security` constant between routes needing different scopes.
    schema.security = [...schema.security, { adminToken: [scope] }];
    // A wrong token counts against the login limit on every such route.
    if (schema.response && !('429' in schema.response)) schema.response = { ...schema.response, ...errorResponses(429) };
  }
}

export const adminAuthHook = (ctx: Context) =>
  async function adminAuth(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    checkOrigin(ctx, request);
    const mode = request.routeOptions.config.adminAuth;
    if (mode === 'none') return;
    const authorization = request.headers.authorization;
    if (authorization !== undefined) return adminTokenAuth(ctx, request, reply, authorization);
    // No Authorization header: the session cookie and X-Svc-CSRF, exactly as before admin tokens.
    const cookie = request.cookies[SESSION_COOKIE];
    const session = cookie ? await resolveSession(ctx, cookie) : null;
    if (!session) throw new AppError('unauthorized', 'Log in first: no live admin session.');
    request.auth = { session };
    if (mode === 'cookie') return;
    const csrf = request.headers['x-svc-csrf'];
    if (!csrfMatches(session, typeof csrf === 'string' ? csrf : undefined)) {
      throw new AppError('csrf_failed', 'The X-Svc-CSRF header is missing or does not belong to this session.');
    }
  };

/** 401 for a missing or unknown bearer token, with the challenge SPEC §3 names. */
export function refuseBearer(reply: FastifyReply, kind: 'missing' | 'invalid'): never {
  reply.header('www-authenticate', kind === 'missing' ? 'Bearer realm="svc"' : 'Bearer realm="svc", error="invalid_token"');
  throw new AppError('unauthorized', kind === 'missing' ? 'Send Authorization: Bearer <token>.' : 'The bearer token is not valid.');
}
