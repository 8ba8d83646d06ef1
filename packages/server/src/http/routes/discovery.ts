import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import { IDEMPOTENCY_TTL_MS } from '../../records/idempotency-store.js';
import { MAX_INDEXED_FIELDS } from '../../records/fields.js';
import { FILTER_MAX_COMPARISONS, FILTER_MAX_DEPTH, FILTER_MAX_LENGTH } from '../../records/query/parser.js';
import { SORT_MAX_KEYS } from '../../records/query/sort.js';
import { BATCH_RECORD_BYTES_PER_BODY } from '../../records/batch.js';
import { TOPICS } from '../../webhooks/topics.js';
import { collectionPages } from '../../records/collections.js';
import { cutDocument, type OpenApiDocument } from '../openapi-document.js';
import { CollectionsAnswer, IfNoneMatch, notModified, sendKept } from '../collections-answers.js';
import { jsonInSlices } from '../../lib/json-slices.js';
import { webhooksSection } from '../openapi-webhooks.js';
import { Capabilities, Problem, errorResponses, ref } from '../schemas.js';
import { EVENTS_MAX_LIMIT, EVENTS_MAX_WAIT_SECONDS } from '../feed-answers.js';

export const FEATURES = [
  'records',
  'records.idempotency-key',
  'records.conditional-requests',
  'collections',
  'schema-inspection',
  'api-tokens.scoped',
  'webhooks',
  'webhooks.signature-v1',
  'webhooks.secret-rotation',
  'webhooks.test-delivery',
  'webhooks.retries',
  'webhooks.dead-letter',
  'webhooks.destination-guard',
  'webhooks.attempt-diagnostics',
  'webhooks.health',
  'webhooks.recover',
  'webhooks.replay',
  'openapi-3.1',
  'events.feed',
  'events.stream',
  'records.batch',
  'webhooks.ordering',
  'webhooks.subscriptions',
  'webhooks.auto-disable',
  'webhooks.operational-events',
  'retention',
  'records.filter',
  'records.sort',
  'webhooks.standard-webhooks',
  'webhooks.ed25519',
  'webhooks.custom-headers',
  'webhooks.rate-limit',
  'destinations.nats',
  'destinations.rabbitmq',
  'destinations.redis',
  'admin.tokens',
  'tracing',
] as const;

/** Every value is the one in force, configuration included: clients may size requests by it. */
export function capabilities(ctx: Context) {
  const c = ctx.config;
  return {
    apiVersion: '1' as const,
    features: [...FEATURES],
    limits: {
      recordsListDefaultLimit: 50,
      recordsListMaxLimit: 500,
      requestBodyMaxBytes: c.bodyMaxBytes,
      requestJsonMaxDepth: c.jsonMaxDepth,
      idempotencyKeyTtlSeconds: IDEMPOTENCY_TTL_MS / 1000,
      webhookMaxAttempts: c.webhookRetrySchedule.length,
      webhookTimeoutMs: c.webhookTimeoutMs,
      webhookSignatureToleranceSeconds: 300,
      webhookDiagnosticsMaxBytes: 1024,
      webhookResponseReadMaxBytes: 65_536,
      webhookRetryAfterMaxSeconds: 3600,
      webhookSecretRotationMaxOverlapSeconds: 604_800,
      loginMaxFailures: c.loginMaxFailures,
      listMaxBytes: c.listMaxBytes,
      eventsListMaxLimit: EVENTS_MAX_LIMIT,
      eventsWaitMaxSeconds: EVENTS_MAX_WAIT_SECONDS,
      streamsPerToken: c.streamsPerToken,
      batchMaxOperations: c.batchMaxOperations,
      batchMaxRecordBytes: BATCH_RECORD_BYTES_PER_BODY * c.bodyMaxBytes,
      retentionDeliveredDays: c.retentionDeliveredDays,
      retentionDeadDays: c.retentionDeadDays,
      retentionEventsDays: c.retentionEventsDays,
      filterMaxLength: FILTER_MAX_LENGTH,
      filterMaxComparisons: FILTER_MAX_COMPARISONS,
      filterMaxDepth: FILTER_MAX_DEPTH,
      sortMaxKeys: SORT_MAX_KEYS,
      indexedFieldsMax: MAX_INDEXED_FIELDS,
      queryTimeoutMs: c.queryTimeoutMs,
      longPollsPerToken: c.longPollsPerToken,
      streamBufferBytes: c.streamBufferBytes,
    },
    topics: [...TOPICS],
  };
}

/** The whole generated document, every route family; cut per family by cutDocument. */
const fullDocument = (app: FastifyInstance) => app.swagger() as unknown as OpenApiDocument;

/** Problems any request may meet before a route runs (malformed HTTP, headers too large, too slow). */
const anyClientError = { '4xx': { ...ref(Problem), description: 'The request could not be taken as HTTP: malformed, headers too large, or too slow' } };

const PUBLIC_PART = { prefix: '/api/v1/', title: 'svc public API' } as const;
const ADMIN_PART = { prefix: '/admin/v1/', title: 'svc admin API' } as const;
const ADMIN_SECURITY = [{ adminSession: [], csrfToken: [] }];

export const discoveryRoutes =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    let doc: string | null = null;
    // The public document never changes while the process runs: built on first request, kept as text.
    const publicDocument = async () =>
      (doc ??= JSON.stringify(
        cutDocument(fullDocument(plain), {
          ...PUBLIC_PART,
          // Every operation states its own; listing both schemes here is what the API as a whole accepts.
          security: [{ bearerAuth: [] }, ...ADMIN_SECURITY],
          ...(await webhooksSection('generic')),
        }),
      ));

    app.get('/api/v1/capabilities', {
      schema: { operationId: 'getCapabilities', summary: 'API version, implemented features, limits in force and event topics', tags: ['discovery'], security: [], response: { 200: ref(Capabilities), ...anyClientError } },
    }, async () => capabilities(ctx));

    app.get('/api/v1/openapi.json', {
      schema: { operationId: 'getOpenApiDocument', summary: 'This document: OpenAPI 3.1 of the /api/v1 routes', tags: ['discovery'], security: [], response: { 200: Type.Object({}, { additionalProperties: true }), ...anyClientError } },
    }, async (_request, reply) => reply.type('application/json').send((await publicDocument()) as never));

  };

/** The admin document, registered inside the admin scope so it sits behind the session and CSRF checks. */
export const adminOpenApiRoute =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    // One record schema per collection: kept for the collections' version it was built at (http/collections-answers.ts).
    const document = new CollectionsAnswer(ctx.database.db, async (pace) => {
      const section = await webhooksSection({ pages: collectionPages(ctx, pace), pace });
      return jsonInSlices(cutDocument(fullDocument(plain), { ...ADMIN_PART, security: ADMIN_SECURITY, ...section }), pace);
    });
    app.get('/admin/v1/openapi.json', {
      schema: {
        operationId: 'getAdminOpenApiDocument',
        summary: 'OpenAPI 3.1 of the /admin/v1 routes',
        tags: ['discovery'],
        security: ADMIN_SECURITY,
        headers: IfNoneMatch,
        response: { 200: Type.Object({}, { additionalProperties: true }), ...notModified, ...errorResponses(401, 403) },
      },
    }, async (request, reply) => sendKept(request, reply, await document.current()));
  };
