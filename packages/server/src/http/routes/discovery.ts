import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import { IDEMPOTENCY_TTL_MS } from '../../records/idempotency-store.js';
import { MAX_INDEXED_FIELDS } from '../../records/fields.js';
import { FILTER_MAX_COMPARISONS, FILTER_MAX_DEPTH, FILTER_MAX_LENGTH } from '../../records/query/parser.js';
import { SORT_MAX_KEYS } from '../../records/query/sort.js';
import { TOPICS } from '../../webhooks/topics.js';
import { Capabilities, errorResponses, ref } from '../schemas.js';
import { EVENTS_MAX_LIMIT, EVENTS_MAX_WAIT_SECONDS } from './events.js';

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
  'openapi-3.1',
  'events.feed',
  'records.filter',
  'records.sort',
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
      filterMaxLength: FILTER_MAX_LENGTH,
      filterMaxComparisons: FILTER_MAX_COMPARISONS,
      filterMaxDepth: FILTER_MAX_DEPTH,
      sortMaxKeys: SORT_MAX_KEYS,
      indexedFieldsMax: MAX_INDEXED_FIELDS,
      queryTimeoutMs: c.queryTimeoutMs,
    },
    topics: [...TOPICS],
  };
}

type OpenApiDoc = { paths?: Record<string, unknown>; [k: string]: unknown };

/** The full generated document, cut to one route family. Computed once, after every route is registered. */
function documentFor(app: FastifyInstance, prefix: string, title: string): OpenApiDoc {
  const full = app.swagger() as OpenApiDoc;
  const paths = Object.fromEntries(Object.entries(full.paths ?? {}).filter(([p]) => p.startsWith(prefix)));
  return { ...full, info: { ...(full.info as object), title }, paths };
}

export const discoveryRoutes =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    let doc: OpenApiDoc | null = null;

    app.get('/api/v1/capabilities', {
      schema: { summary: 'API version, implemented features, limits in force and event topics', tags: ['discovery'], security: [], response: { 200: ref(Capabilities) } },
    }, async () => capabilities(ctx));

    app.get('/api/v1/openapi.json', {
      schema: { summary: 'This document: OpenAPI 3.1 of the /api/v1 routes', tags: ['discovery'], security: [], response: { 200: Type.Object({}, { additionalProperties: true }) } },
    }, async (_request, reply) => reply.type('application/json').send(JSON.stringify((doc ??= documentFor(plain, '/api/v1/', 'svc public API'))) as never));

  };

/** The admin document, registered inside the admin scope so it sits behind the session and CSRF checks. */
export const adminOpenApiRoute: FastifyPluginAsync = async (plain) => {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
  let doc: OpenApiDoc | null = null;
  app.get('/admin/v1/openapi.json', {
    schema: {
      summary: 'OpenAPI 3.1 of the /admin/v1 routes',
      tags: ['discovery'],
      security: [{ adminSession: [], csrfToken: [] }],
      response: { 200: Type.Object({}, { additionalProperties: true }), ...errorResponses(401, 403) },
    },
  }, async (_request, reply) => reply.type('application/json').send(JSON.stringify((doc ??= documentFor(plain, '/admin/v1/', 'svc admin API'))) as never));
};
