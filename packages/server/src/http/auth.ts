import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { adminScopeFor } from '../auth/admin-scopes.js';
import type { AdminToken } from '../auth/admin-tokens-store.js';
import { ADMIN_TOKEN_PREFIX, authenticateAdminToken } from '../auth/admin-tokens.js';
import type { ApiToken, Scope } from '../auth/api-tokens-store.js';
import { authenticateBearer, authorize } from '../auth/api-tokens.js';
import { csrfMatches, resolveSession, type ActiveSession } from '../auth/sessions.js';
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { errorResponses } from './schemas.js';
import type { Collection } from '../records/collections-store.js';
import { COLLECTION_NAME } from '../records/fields.js';

export const SESSION_COOKIE = 'svc_admin';

/** Per-request auth results; set by the onRequest hooks below, read by handlers. */
export interface RequestAuth {
  session?: ActiveSession;
  /** Admin routes called with `Authorization: Bearer svcadm_…` instead of a session (SPEC §16). */
  adminToken?: AdminToken;
  /** The admin token as presented, for an event stream's re-checks. */
  adminTokenValue?: string;
  token?: ApiToken;
  collection?: Collection;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: RequestAuth;
  }
  interface FastifyContextConfig {
    /** Admin routes: 'none' (login, setup), 'cookie' (GET session), default cookie + CSRF. */
    adminAuth?: 'none' | 'cookie';
    /** Public record routes: the scope this route needs. */
    scope?: Scope;
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
  const scope = adminScopeFor(request.method, request.routeOptions.url ?? '');
  if (scope === null) throw new AppError('forbidden', 'Admin tokens may not use this route: it needs an admin session.');
  if (!token.scopes.includes(scope)) throw new AppError('forbidden', `This admin token lacks the ${scope} scope.`);
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

/**
 * Public record routes: who (401) before what (403), and a collection the token may not see answers
 * exactly like one that does not exist (403), so names cannot be probed. Decided before the body is read.
 */
/** 401 for a missing or unknown bearer token, with the challenge SPEC §3 names. */
export function refuseBearer(reply: FastifyReply, kind: 'missing' | 'invalid'): never {
  reply.header('www-authenticate', kind === 'missing' ? 'Bearer realm="svc"' : 'Bearer realm="svc", error="invalid_token"');
  throw new AppError('unauthorized', kind === 'missing' ? 'Send Authorization: Bearer <token>.' : 'The bearer token is not valid.');
}

export const bearerAuthHook = (ctx: Context) =>
  async function bearerAuth(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Runs before the params are validated: a name that cannot exist is looked up as no name at all (403
    // below), so a NUL or an over-long name never reaches a query.
    const given = (request.params as { collection?: string }).collection ?? '';
    const name = COLLECTION_NAME.test(given) ? given : '';
    const result = await authenticateBearer(ctx, request.headers.authorization, name);
    if (result.kind !== 'ok') refuseBearer(reply, result.kind);
    authorize(result.token, request.routeOptions.config.scope ?? 'records:read', name);
    if (!result.collection) throw new AppError('forbidden', 'This token may not use this collection.');
    request.auth = { token: result.token, collection: result.collection };
  };
