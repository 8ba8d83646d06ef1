import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { ApiToken, Scope } from '../auth/api-tokens-store.js';
import { authenticateBearer } from '../auth/api-tokens.js';
import { bearerRefusal, requireBearer } from '../auth/bearer-policy.js';
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { namedCollections } from '../events/feed.js';
import { findCollection } from '../records/collections-store.js';
import { COLLECTION_NAME } from '../records/fields.js';
import { refuseBearer } from './auth.js';

/**
 * Every token-guarded public route (`/api/v1/…`) is registered through publicRoutes below, and so behind its hook:
 * who the token is (401), then what it may do (403, auth/bearer-policy.ts), decided before the body is read. A route
 * states the scope it needs and where it names its collections in its `config`; one that states no scope fails at
 * start-up rather than being open.
 */
export interface BearerRoute {
  scope: Scope;
  /**
   * Where the request names the collections it uses: `path` (`:collection`, checked before the body is read), `query`
   * (repeatable `collection`, checked once the query is valid; `request.auth.collections` then holds what the token
   * reads), `body` (a batch's operations, each checked by bearerCollectionCheck as the batch runs), or `none`.
   */
  collections: 'path' | 'query' | 'body' | 'none';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Public routes: what a bearer token needs (see BearerRoute). */
    bearer?: BearerRoute;
  }
}

function bearerRoute(request: FastifyRequest): BearerRoute {
  const route = request.routeOptions.config.bearer;
  // Unreachable: publicRoutes refuses such a route at start-up.
  if (!route) throw new AppError('internal', 'This route states no bearer scope.');
  return route;
}

const bearerAuth = (ctx: Context) =>
  async function bearerAuth(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const route = bearerRoute(request);
    // Runs before the params are validated: a name that cannot exist is looked up as no name at all (403 from the
    // policy), so a NUL or an over-long name never reaches a query.
    const given = route.collections === 'path' ? ((request.params as { collection?: string }).collection ?? '') : null;
    const name = given !== null && COLLECTION_NAME.test(given) ? given : '';
    // The collection the path names comes back from the token's own look-up: one statement per record request.
    const result = await authenticateBearer(ctx, request.headers.authorization, name);
    if (result.kind !== 'ok') refuseBearer(reply, result.kind);
    await requireBearer(result.token, { scope: route.scope, collections: given === null ? [] : [name], exists: () => result.collection !== null });
    request.auth = given === null ? { token: result.token } : { token: result.token, collection: result.collection! };
  };

/** `query` routes, once the query is valid: the collections it names, each one the token may read and, as the policy asks, one that exists. */
const bearerQueryCollections = (ctx: Context) =>
  async function bearerQueryCollections(request: FastifyRequest): Promise<void> {
    const token = request.auth.token!;
    const asked = (request.query as { collection?: string[] }).collection ?? [];
    await requireBearer(token, { scope: bearerRoute(request).scope, collections: asked, exists: async (name) => (await findCollection(ctx.database.db, name)) !== null });
    request.auth.collections = namedCollections(asked) ?? token.collections;
  };

/**
 * Registers token-guarded public routes behind the hook. Routes answered to anyone (discovery) are registered
 * elsewhere, without it.
 */
export function publicRoutes(ctx: Context, register: (api: FastifyInstance) => Promise<void>) {
  return async (api: FastifyInstance): Promise<void> => {
    api.addHook('onRoute', (route: RouteOptions) => {
      const bearer = route.config?.bearer;
      if (!bearer) throw new Error(`${String(route.method)} ${route.url}: a public route must state its bearer scope (config.bearer)`);
      if (bearer.collections === 'query') route.preHandler = [bearerQueryCollections(ctx), ...[route.preHandler ?? []].flat()];
    });
    api.addHook('onRequest', bearerAuth(ctx));
    await register(api);
  };
}

/** A batch operation's collection: the token may write it and it exists (the policy's 403 otherwise). */
export const bearerCollectionCheck =
  (token: ApiToken, scope: Scope) =>
  (collection: string, exists: (name: string) => Promise<boolean>): Promise<void> =>
    requireBearer(token, { scope, collections: [collection], exists });

/**
 * An event stream's re-check of the token that opened it: a revoked or deleted token (401), or one that lost the
 * scope (the policy's 403), ends its streams. Null while it holds.
 */
export async function bearerStillHolds(ctx: Context, authorization: string | undefined, scope: Scope): Promise<AppError | null> {
  const result = await authenticateBearer(ctx, authorization, '');
  if (result.kind !== 'ok') return new AppError('unauthorized', 'The bearer token is no longer valid.');
  return bearerRefusal(result.token, { scope, collections: [], exists: () => false });
}
