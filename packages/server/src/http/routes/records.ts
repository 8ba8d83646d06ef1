import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiToken } from '../../auth/api-tokens-store.js';
import { bearerRefusal, showsRecordData } from '../../auth/bearer-policy.js';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { idPattern } from '../../lib/ids.js';
import { COLLECTION_NAME } from '../../records/fields.js';
import { CollectionGone, createRecord, getRecord, patchRecord, removeRecord } from '../../records/changes.js';
import { listRecordsJson } from '../../records/query/list-request.js';
import { recordJson, type RecordJson } from '../../records/record-json.js';
import type { Outbox } from '../../webhooks/outbox.js';
import { requestSpan } from '../tracing-hooks.js';
import { RecordList, RecordListQuery, RecordSchema, RecordWrite, RecordWritten, errorResponses, ref } from '../schemas.js';

const REC_ID = idPattern('rec');
// Path parameters are checked by shape before anything reaches a query: a malformed one is not_found.
const CollectionName = Type.String({ pattern: COLLECTION_NAME.source });
const CollectionParams = Type.Object({ collection: CollectionName });
const RecordParams = Type.Object({ collection: CollectionName, id: Type.String({ pattern: REC_ID.source }) });
const security = [{ bearerAuth: [] }];

/** `If-Match: "<version>"` (or W/"…", or *): a malformed value is a failed precondition, not ignored. */
export function ifMatchVersion(header: string | undefined): number | null {
  if (header === undefined) return null;
  if (header.trim() === '*') return null;
  const m = /^\s*(?:W\/)?"(\d{1,15})"\s*$/.exec(header);
  if (!m) throw new AppError('precondition_failed', 'If-Match must be a quoted record version such as "3".');
  return Number(m[1]);
}

export function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(header)) {
    throw new AppError('validation_failed', 'Idempotency-Key must be 1 to 255 visible ASCII characters.', {
      errors: [{ path: 'Idempotency-Key', message: 'invalid header' }],
    });
  }
  return header;
}

/** SPEC §11: a token without records:read gets write answers without `data` (the member omitted, not emptied). */
export function answerFor(token: ApiToken, record: RecordJson): RecordJson | Omit<RecordJson, 'data'> {
  if (showsRecordData(token)) return record;
  const { data: _hidden, ...rest } = record;
  return rest;
}

export const recordRoutes =
  (ctx: Context, outbox: Outbox): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const base = '/api/v1/collections/:collection/records';

    app.get(base, {
      config: { bearer: { scope: 'records:read', collections: 'path' } },
      schema: {
        operationId: 'listRecords',
        summary: 'List records of a collection, in creation order',
        tags: ['records'],
        security,
        params: CollectionParams,
        querystring: RecordListQuery,
        response: { 200: ref(RecordList), ...errorResponses(400, 401, 403) },
      },
    }, async (request, reply) => {
      const json = await listRecordsJson(ctx, request.auth.collection!, request.query);
      return reply.type('application/json; charset=utf-8').send(json as never);
    });

    app.post(base, {
      config: { bearer: { scope: 'records:write', collections: 'path' } },
      schema: {
        operationId: 'createRecord',
        summary: 'Create a record (Idempotency-Key makes a repeat return the first result)',
        tags: ['records'],
        security,
        params: CollectionParams,
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        body: RecordWrite,
        response: { 201: ref(RecordWritten), 200: ref(RecordWritten), ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
      },
    }, async (request, reply) => {
      const token = request.auth.token!;
      const key = idempotencyKey(request.headers['idempotency-key']);
      const collection = request.auth.collection!;
      const result = await createRecord(ctx, outbox.forRequest(requestSpan(request)), collection, request.body.data, key ? { tokenId: token.id, key } : undefined).catch(async (err: unknown) => {
        // Deleted since the token's check: answered as a missing collection is here (bearer-policy.ts), never 500.
        if (err instanceof CollectionGone) throw (await bearerRefusal(token, { scope: 'records:write', collections: [collection.name], exists: () => false })) ?? err;
        throw err;
      });
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(result.status as 201).header('etag', `"${result.record.version}"`).send(answerFor(token, result.record));
    });

    app.get(`${base}/:id`, {
      config: { bearer: { scope: 'records:read', collections: 'path' } },
      schema: {
        operationId: 'getRecord',
        summary: 'Read one record; ETag is its version',
        tags: ['records'],
        security,
        params: RecordParams,
        response: { 200: ref(RecordSchema), ...errorResponses(401, 403, 404) },
      },
    }, async (request, reply) => {
      const record = await getRecord(ctx, request.auth.collection!.name, request.params.id);
      return reply.header('etag', `"${record.version}"`).send(recordJson(record));
    });

    app.patch(`${base}/:id`, {
      config: { bearer: { scope: 'records:write', collections: 'path' } },
      schema: {
        operationId: 'updateRecord',
        summary: 'Set the named fields (null clears one); If-Match guards against lost updates',
        tags: ['records'],
        security,
        params: RecordParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        body: RecordWrite,
        response: { 200: ref(RecordWritten), ...errorResponses(400, 401, 403, 404, 412, 413, 415, 422) },
      },
    }, async (request, reply) => {
      const version = ifMatchVersion(request.headers['if-match']);
      const record = await patchRecord(ctx, outbox.forRequest(requestSpan(request)), request.auth.collection!, request.params.id, request.body.data, version);
      return reply.header('etag', `"${record.version}"`).send(answerFor(request.auth.token!, record));
    });

    app.delete(`${base}/:id`, {
      config: { bearer: { scope: 'records:write', collections: 'path' } },
      schema: {
        operationId: 'deleteRecord',
        summary: 'Delete a record',
        tags: ['records'],
        security,
        params: RecordParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 412) },
      },
    }, async (request, reply) => {
      const version = ifMatchVersion(request.headers['if-match']);
      await removeRecord(ctx, outbox.forRequest(requestSpan(request)), request.auth.collection!, request.params.id, version);
      return reply.code(204).send(null);
    });
  };
