import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiToken, Scope } from '../auth/api-tokens-store.js';
import { authenticateBearer, authorize } from '../auth/api-tokens.js';
import { csrfMatches, resolveSession, type ActiveSession } from '../auth/sessions.js';
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import type { Collection } from '../records/collections-store.js';
import { COLLECTION_NAME } from '../records/fields.js';

export const SESSION_COOKIE = 'svc_admin';

/** Per-request auth results; set by the onRequest hooks below, read by handlers. */
export interface RequestAuth {
  session?: ActiveSession;
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

export const adminAuthHook = (ctx: Context) =>
  async function adminAuth(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    checkOrigin(ctx, request);
    const mode = request.routeOptions.config.adminAuth;
    if (mode === 'none') return;
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
