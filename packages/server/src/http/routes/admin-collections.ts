import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import { decodeCursor, jsonBytes, pageWithin } from '../../lib/cursor.js';
import { idPattern } from '../../lib/ids.js';
import { collectionPages, createCollection, patchCollection, removeCollection, requireCollection } from '../../records/collections.js';
import { listCollections } from '../../records/collections-store.js';
import { COLLECTION_NAME, MAX_FIELDS } from '../../records/fields.js';
import { createRecord, getRecord, patchRecord, removeRecord } from '../../records/changes.js';
import { listRecordsJson } from '../../records/query/list-request.js';
import { recordJson } from '../../records/record-json.js';
import type { Outbox } from '../../webhooks/outbox.js';
import { requestSpan } from '../tracing-hooks.js';
import { CollectionsAnswer, IfNoneMatch, notModified, sendKept } from '../collections-answers.js';
import { JsonBytes, jsonInSlices } from '../../lib/json-slices.js';
import { presentCollection } from '../present.js';
import { Collection, CollectionList, Field, ListQuery, RecordList, RecordListQuery, RecordSchema, RecordWrite, RecordWritten, errorResponses, ref } from '../schemas.js';
import { ifMatchVersion } from './records.js';

const NameParams = Type.Object({ name: Type.String({ pattern: COLLECTION_NAME.source }) });
const RecordParams = Type.Object({ name: Type.String({ pattern: COLLECTION_NAME.source }), id: Type.String({ pattern: idPattern('rec').source }) });
const IfMatch = Type.Object({ 'if-match': Type.Optional(Type.String()) });
const security = [{ adminSession: [], csrfToken: [] }];
const Fields = Type.Array(ref(Field), { maxItems: MAX_FIELDS });
const NAME_KEY = new RegExp(COLLECTION_NAME.source);

export const adminCollectionRoutes =
  (ctx: Context, outbox: Outbox): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();

    // Kept for the collections' version it was built at (http/collections-answers.ts).
    const schemaAnswer = new CollectionsAnswer(ctx.database.db, async (pace) => {
      // A collection's part is made as JSON at once (JsonBytes), so the collection can be let go.
      const collections: JsonBytes[] = [];
      for await (const page of collectionPages(ctx, pace)) collections.push(...page.map((c) => JsonBytes.of(presentCollection(c))));
      return jsonInSlices({ collections }, pace);
    });
    app.get('/admin/v1/api/schema', {
      schema: {
        operationId: 'getSchema',
        summary: 'Every collection and its fields: no record data, no credentials',
        tags: ['collections'],
        security,
        headers: IfNoneMatch,
        response: {
          200: Type.Object({ collections: Type.Array(ref(Collection)) }, { additionalProperties: false }),
          ...notModified,
          ...errorResponses(401, 403),
        },
      },
    }, async (request, reply) => sendKept(request, reply, await schemaAnswer.current()));

    app.get('/admin/v1/collections', {
      schema: { operationId: 'listCollections', summary: 'List collections', tags: ['collections'], security, querystring: ListQuery, response: { 200: ref(CollectionList), ...errorResponses(400, 401, 403) } },
    }, async (request) => {
      const limit = request.query.limit ?? 50;
      const rows = (await listCollections(ctx.database.db, decodeCursor(request.query.cursor, NAME_KEY), limit + 1)).map(presentCollection);
      return pageWithin(rows, limit, ctx.config.listMaxBytes, (c) => c.name, jsonBytes);
    });

    app.post('/admin/v1/collections', {
      schema: {
        operationId: 'createCollection',
        summary: 'Create a collection with its fields',
        tags: ['collections'],
        security,
        body: Type.Object({ name: Type.String({ maxLength: 63 }), fields: Type.Optional(Fields) }, { additionalProperties: false }),
        response: { 201: ref(Collection), ...errorResponses(401, 403, 409, 422) },
      },
    }, async (request, reply) => {
      const c = await createCollection(ctx, request.body.name, (request.body.fields ?? []) as never);
      return reply.code(201).send(presentCollection(c));
    });

    app.get('/admin/v1/collections/:name', {
      schema: { operationId: 'getCollection', summary: 'One collection', tags: ['collections'], security, params: NameParams, response: { 200: ref(Collection), ...errorResponses(401, 403, 404) } },
    }, async (request) => presentCollection(await requireCollection(ctx, request.params.name)));

    app.patch('/admin/v1/collections/:name', {
      schema: {
        operationId: 'updateCollection',
        summary: 'Add fields or change `required` (the list given is the new field list; types never change)',
        tags: ['collections'],
        security,
        params: NameParams,
        body: Type.Object({ fields: Fields }, { additionalProperties: false }),
        response: { 200: ref(Collection), ...errorResponses(401, 403, 404, 409, 422) },
      },
    }, async (request) => presentCollection(await patchCollection(ctx, request.params.name, request.body.fields as never)));

    app.delete('/admin/v1/collections/:name', {
      schema: {
        operationId: 'deleteCollection',
        summary: 'Delete a collection (force=true also deletes its records)',
        tags: ['collections'],
        security,
        params: NameParams,
        querystring: Type.Object({ force: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    }, async (request, reply) => {
      await removeCollection(ctx, request.params.name, request.query.force === true);
      return reply.code(204).send(null);
    });

    app.get('/admin/v1/collections/:name/records', {
      schema: {
        operationId: 'listCollectionRecords',
        summary: 'Browse records (admin UI); same shape as the public list',
        tags: ['collections'],
        security,
        params: NameParams,
        querystring: RecordListQuery,
        response: { 200: ref(RecordList), ...errorResponses(400, 401, 403, 404) },
      },
    }, async (request, reply) => {
      const c = await requireCollection(ctx, request.params.name);
      const json = await listRecordsJson(ctx, c, request.query);
      return reply.type('application/json; charset=utf-8').send(json as never);
    });

    // The admin UI's record editor (issue 24): the public API's writes, made by an admin. The same code path, so the
    // write, its event and its delivery jobs commit together and If-Match guards against lost updates.
    app.post('/admin/v1/collections/:name/records', {
      schema: {
        operationId: 'createCollectionRecord',
        summary: 'Create a record (admin UI); as the public create, without Idempotency-Key',
        tags: ['collections'],
        security,
        params: NameParams,
        body: RecordWrite,
        response: { 201: ref(RecordWritten), ...errorResponses(401, 403, 404, 413, 415, 422) },
      },
    }, async (request, reply) => {
      const result = await createRecord(ctx, outbox.forRequest(requestSpan(request)), await requireCollection(ctx, request.params.name), request.body.data, undefined);
      return reply.code(201).header('etag', `"${result.record.version}"`).send(result.record);
    });

    app.get('/admin/v1/collections/:name/records/:id', {
      schema: { operationId: 'getCollectionRecord', summary: 'One record (admin UI); ETag is its version', tags: ['collections'], security, params: RecordParams, response: { 200: ref(RecordSchema), ...errorResponses(401, 403, 404) } },
    }, async (request, reply) => {
      const record = await getRecord(ctx, (await requireCollection(ctx, request.params.name)).name, request.params.id);
      return reply.header('etag', `"${record.version}"`).send(recordJson(record));
    });

    app.patch('/admin/v1/collections/:name/records/:id', {
      schema: {
        operationId: 'updateCollectionRecord',
        summary: 'Set the named fields of a record (admin UI); If-Match guards against lost updates',
        tags: ['collections'],
        security,
        params: RecordParams,
        headers: IfMatch,
        body: RecordWrite,
        response: { 200: ref(RecordWritten), ...errorResponses(400, 401, 403, 404, 412, 413, 415, 422) },
      },
    }, async (request, reply) => {
      const version = ifMatchVersion(request.headers['if-match']);
      const record = await patchRecord(ctx, outbox.forRequest(requestSpan(request)), await requireCollection(ctx, request.params.name), request.params.id, request.body.data, version);
      return reply.header('etag', `"${record.version}"`).send(record);
    });

    app.delete('/admin/v1/collections/:name/records/:id', {
      schema: {
        operationId: 'deleteCollectionRecord',
        summary: 'Delete a record (admin UI)',
        tags: ['collections'],
        security,
        params: RecordParams,
        headers: IfMatch,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 412) },
      },
    }, async (request, reply) => {
      const version = ifMatchVersion(request.headers['if-match']);
      await removeRecord(ctx, outbox.forRequest(requestSpan(request)), await requireCollection(ctx, request.params.name), request.params.id, version);
      return reply.code(204).send(null);
    });
  };
