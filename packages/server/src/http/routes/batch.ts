import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import { idPattern } from '../../lib/ids.js';
import { runBatch, type BatchResult } from '../../records/batch.js';
import { COLLECTION_NAME } from '../../records/fields.js';
import type { Outbox } from '../../webhooks/outbox.js';
import { requestSpan } from '../tracing-hooks.js';
import { bearerCollectionCheck } from '../bearer-auth.js';
import { RecordWritten, errorResponses, ref } from '../schemas.js';
import { answerFor, idempotencyKey } from './records.js';

const strict = { additionalProperties: false } as const;

/** One operation; which of `id`, `data` and `ifMatch` a method needs is checked as the operation runs. */
const BatchOperation = Type.Object(
  {
    method: Type.Union([Type.Literal('POST'), Type.Literal('PATCH'), Type.Literal('DELETE')]),
    collection: Type.String({ pattern: COLLECTION_NAME.source, maxLength: 63 }),
    id: Type.Optional(Type.String({ pattern: idPattern('rec').source, description: 'PATCH and DELETE: the record.' })),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'POST and PATCH: the fields to set.' })),
    ifMatch: Type.Optional(Type.Integer({ minimum: 1, description: 'PATCH and DELETE: the version the record must be at (as If-Match).' })),
  },
  strict,
);

const BatchResultSchema = Type.Object(
  {
    status: Type.Union([Type.Literal(201), Type.Literal(200), Type.Literal(204)]),
    record: Type.Optional(ref(RecordWritten)),
  },
  { ...strict, description: 'One operation\'s outcome: 201 created or 200 updated with the record, 204 deleted.' },
);

export const batchRoutes =
  (ctx: Context, outbox: Outbox): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/api/v1/batch', {
      // The write scope before the body is read; its collections once it is (they are in it), operation by operation.
      config: { bearer: { scope: 'records:write', collections: 'body' } },
      schema: {
        operationId: 'runBatch',
        summary: 'Run record writes in one transaction: all commit, each with its event and jobs, or none does',
        tags: ['records'],
        security: [{ bearerAuth: [] }],
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        body: Type.Object({ operations: Type.Array(BatchOperation, { minItems: 1, maxItems: ctx.config.batchMaxOperations }) }, strict),
        response: {
          200: Type.Object({ results: Type.Array(BatchResultSchema) }, strict),
          ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 422),
        },
      },
    }, async (request, reply) => {
      const token = request.auth.token!;
      const key = idempotencyKey(request.headers['idempotency-key']);
      const caller = { tokenId: token.id, authorize: bearerCollectionCheck(token, 'records:write') };
      const outcome = await runBatch(ctx, outbox.forRequest(requestSpan(request)), caller, request.body.operations, key);
      if (outcome.replayed) reply.header('idempotent-replayed', 'true');
      const results = outcome.value.map((r: BatchResult) => ('record' in r ? { status: r.status, record: answerFor(token, r.record) } : r));
      return reply.send({ results });
    });
  };
