import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN_SCOPES } from '../../auth/admin-scopes.js';
import { createAdminToken } from '../../auth/admin-tokens.js';
import { deleteAdminToken, listAdminTokens, type AdminToken } from '../../auth/admin-tokens-store.js';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { iso } from '../../lib/clock.js';
import { decodeCursor, jsonBytes, pageWithin } from '../../lib/cursor.js';
import { idPattern } from '../../lib/ids.js';
import { ListQuery, errorResponses } from '../schemas.js';

// A session only: auth/admin-scopes.ts makes these routes session-only, so a token can never mint or revoke one.
const security = [{ adminSession: [], csrfToken: [] }];
const strict = { additionalProperties: false } as const;
const DateTime = Type.String({ format: 'date-time' });

const AdminScopeSchema = Type.Union([Type.Literal('admin:read'), Type.Literal('admin:webhooks'), Type.Literal('admin:collections'), Type.Literal('admin:tokens')], {
  description: 'admin:read: every admin GET. admin:webhooks: targets and deliveries (test, rotate-secret, recover, replay, retry). admin:collections: collections, their fields and records. admin:tokens: API tokens (never admin tokens).',
});
const AdminTokenSchema = Type.Object(
  {
    id: Type.String({ pattern: '^adt_' }),
    name: Type.String(),
    scopes: Type.Array(AdminScopeSchema),
    createdAt: DateTime,
    lastUsedAt: Type.Union([DateTime, Type.Null()], { description: 'Written at most once a minute.' }),
    createdBy: Type.String({ description: 'The id of the admin whose session created the token, or `cli` for `svc admin-token create`.' }),
  },
  strict,
);
const AdminTokenCreated = Type.Object(
  { ...AdminTokenSchema.properties, token: Type.String({ pattern: '^svcadm_', description: 'Shown in this answer only; svc keeps its SHA-256.' }) },
  strict,
);
const AdminTokenList = Type.Object({ items: Type.Array(AdminTokenSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }, strict);

const present = (t: AdminToken) => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes,
  createdAt: iso(t.createdAt),
  lastUsedAt: t.lastUsedAt === null ? null : iso(t.lastUsedAt),
  createdBy: t.createdBy,
});

export const adminAdminTokenRoutes =
  /** `revoked`: told once a revocation has committed, to end that token's event streams in this process at once. */
  (ctx: Context, revoked: (tokenId: string) => Promise<void> = async () => {}): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();

    app.post('/admin/v1/admin-tokens', {
      schema: {
        operationId: 'createAdminToken',
        summary: 'Create an admin token for automation on the admin API (the token appears in this answer only)',
        tags: ['admin-tokens'],
        security,
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }), scopes: Type.Array(AdminScopeSchema, { minItems: 1, maxItems: ADMIN_SCOPES.length }) },
          strict,
        ),
        response: { 201: AdminTokenCreated, ...errorResponses(401, 403, 422) },
      },
    }, async (request, reply) => {
      const created = await createAdminToken(ctx, { ...request.body, createdBy: request.auth.session!.admin.id });
      return reply.code(201).send({ ...present(created), token: created.token });
    });

    app.get('/admin/v1/admin-tokens', {
      schema: { operationId: 'listAdminTokens', summary: 'List admin tokens (never the tokens themselves)', tags: ['admin-tokens'], security, querystring: ListQuery, response: { 200: AdminTokenList, ...errorResponses(400, 401, 403) } },
    }, async (request) => {
      const limit = request.query.limit ?? 50;
      const rows = (await listAdminTokens(ctx.database.db, decodeCursor(request.query.cursor, idPattern('adt')), limit + 1)).map(present);
      return pageWithin(rows, limit, ctx.config.listMaxBytes, (t) => t.id, jsonBytes);
    });

    app.delete('/admin/v1/admin-tokens/:id', {
      schema: {
        operationId: 'deleteAdminToken',
        summary: 'Revoke an admin token; it stops working at once, in every process',
        tags: ['admin-tokens'],
        security,
        params: Type.Object({ id: Type.String({ pattern: idPattern('adt').source }) }),
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    }, async (request, reply) => {
      if (!(await deleteAdminToken(ctx.database.db, request.params.id))) throw new AppError('not_found', 'No such admin token.');
      await revoked(request.params.id);
      return reply.code(204).send(null);
    });
  };
