import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createApiToken } from '../../auth/api-tokens.js';
import { deleteApiToken, listApiTokens, SCOPES } from '../../auth/api-tokens-store.js';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { decodeCursor, jsonBytes, pageWithin, readWithin } from '../../lib/cursor.js';
import { idPattern } from '../../lib/ids.js';
import { presentToken } from '../present.js';
import { ApiTokenCreated, ApiTokenList, ListQuery, Scope, errorResponses, ref } from '../schemas.js';

const security = [{ adminSession: [], csrfToken: [] }];

export const adminTokenRoutes =
  /** `revoked`: told once a deletion has committed, to end that token's event streams in this process at once. */
  (ctx: Context, revoked: (tokenId: string) => Promise<void> = async () => {}): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();

    app.post('/admin/v1/tokens', {
      schema: {
        operationId: 'createApiToken',
        summary: 'Create an API token (the token appears in this answer only)',
        tags: ['tokens'],
        security,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            scopes: Type.Array(Scope, { minItems: 1, maxItems: SCOPES.length }),
            collections: Type.Union([Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$' }), { maxItems: 1000 }), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        response: { 201: ref(ApiTokenCreated), ...errorResponses(401, 403, 422) },
      },
    }, async (request, reply) => {
      const created = await createApiToken(ctx, request.body);
      return reply.code(201).send({ ...presentToken(created), token: created.token });
    });

    app.get('/admin/v1/tokens', {
      schema: { operationId: 'listApiTokens', summary: 'List API tokens (never the tokens themselves)', tags: ['tokens'], security, querystring: ListQuery, response: { 200: ref(ApiTokenList), ...errorResponses(400, 401, 403) } },
    }, async (request) => {
      const limit = request.query.limit ?? 50;
      // A token may name up to 1,000 collections: read in chunks, as far as the page's bytes go.
      const read = async (after: string | null, n: number) => (await listApiTokens(ctx.database.db, after, n)).map(presentToken);
      const rows = await readWithin(read, decodeCursor(request.query.cursor, idPattern('tok')), { limit, maxBytes: ctx.config.listMaxBytes, chunk: 50, key: (t) => t.id, bytes: jsonBytes });
      return pageWithin(rows, limit, ctx.config.listMaxBytes, (t) => t.id, jsonBytes);
    });

    app.delete('/admin/v1/tokens/:id', {
      schema: { operationId: 'deleteApiToken', summary: 'Revoke a token; it stops working at once', tags: ['tokens'], security, params: Type.Object({ id: Type.String({ pattern: idPattern('tok').source }) }), response: { 204: Type.Null(), ...errorResponses(401, 403, 404) } },
    }, async (request, reply) => {
      if (!(await deleteApiToken(ctx.database.db, request.params.id))) throw new AppError('not_found', 'No such token.');
      await revoked(request.params.id);
      return reply.code(204).send(null);
    });
  };
