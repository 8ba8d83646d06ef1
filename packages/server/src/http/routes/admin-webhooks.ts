import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import type { Context } from '../../context.js';
import { decodeCursor, jsonBytes, pageWithin } from '../../lib/cursor.js';
import { asId, idPattern } from '../../lib/ids.js';
import { COLLECTION_NAME } from '../../records/fields.js';
import { checkSubscriptionFilter } from '../../records/subscription-filter.js';
import { listTargets } from '../../webhooks/targets-store.js';
import type { Outbox } from '../../webhooks/outbox.js';
import { requestSpan } from '../tracing-hooks.js';
import { createTarget, patchTarget, removeTarget, requireTarget, rotateSecret, sendTest, type FilterCheck } from '../../webhooks/targets.js';
import { presentTarget } from '../present.js';
import { ListQuery, RateLimit, SignatureAlgorithm, SignatureScheme, TargetTypeSchema, TopicSchema, Webhook, WebhookList, WebhookWithSecret, errorResponses, ref } from '../schemas.js';
import type { TargetWithMaterial } from '../../webhooks/targets.js';

const IdParams = Type.Object({ id: Type.String({ pattern: idPattern('wh').source }) });
const security = [{ adminSession: [], csrfToken: [] }];
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Url = Type.String({ minLength: 1, maxLength: 2048 });
const Topics = Type.Array(TopicSchema, { minItems: 1, maxItems: 16 });
const orNull = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
// SPEC §14's destination: `url` for https, a broker by name and the place in it for the others. Which fields go with
// which type, and what a subject, key or stream may hold, is checked in webhooks/target-destination.ts (each refusal
// at its own path); the schema bounds only what could not be one at all.
const Destination = {
  type: Type.Optional(TargetTypeSchema),
  url: orNull(Url),
  broker: orNull(Type.String({ minLength: 1, maxLength: 32 })),
  subject: orNull(Type.String({ minLength: 1, maxLength: 255 })),
  exchange: orNull(Type.String({ maxLength: 255 })),
  routingKey: orNull(Type.String({ maxLength: 255 })),
  stream: orNull(Type.String({ minLength: 1, maxLength: 512 })),
  maxLength: orNull(Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 })),
};
// SPEC §9's subscription fields; null clears one (all collections, no filter, any change).
const Subscription = {
  collections: Type.Optional(Type.Union([Type.Array(Type.String({ pattern: COLLECTION_NAME.source, maxLength: 63 }), { minItems: 1, maxItems: 100 }), Type.Null()])),
  filter: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()])),
  changedFields: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 63 }), { minItems: 1, maxItems: 100 }), Type.Null()])),
  ordering: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('record')])),
};
// SPEC §13's receiver fields. Header names and values are checked in static-headers.ts, where every refusal gets its
// own path; the schema bounds only what could not be a header at all.
const Receiver = {
  signatureScheme: Type.Optional(SignatureScheme),
  signatureAlgorithm: Type.Optional(SignatureAlgorithm),
  headers: Type.Optional(Type.Union([Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 4096 })), Type.Null()])),
  rateLimit: Type.Optional(Type.Union([RateLimit, Type.Null()])),
};

/** A target with what was made for it: a secret shown this once; an ed25519 target's public key is in every answer. */
const withMaterial = (t: TargetWithMaterial) => (t.secret === null ? presentTarget(t) : { ...presentTarget(t), secret: t.secret });

export const adminWebhookRoutes =
  (ctx: Context, outbox: Outbox): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const checkFilter: FilterCheck = (collections, filter) => checkSubscriptionFilter(ctx.database.db, collections, filter);

    app.post('/admin/v1/webhooks', {
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook target (HTTPS, or a NATS, RabbitMQ or Redis broker the operator configured); the signing secret appears in this answer only (an ed25519 target: its public key, in every answer)',
        tags: ['webhooks'],
        security,
        body: Type.Object({ name: Name, ...Destination, topics: Topics, enabled: Type.Optional(Type.Boolean()), ...Subscription, ...Receiver }, { additionalProperties: false }),
        response: { 201: ref(WebhookWithSecret), ...errorResponses(401, 403, 413, 415, 422) },
      },
    }, async (request, reply) => {
      return reply.code(201).send(withMaterial(await createTarget(ctx, request.body, checkFilter)));
    });

    app.get('/admin/v1/webhooks', {
      schema: { operationId: 'listWebhooks', summary: 'List webhook targets', tags: ['webhooks'], security, querystring: ListQuery, response: { 200: ref(WebhookList), ...errorResponses(400, 401, 403) } },
    }, async (request) => {
      const limit = request.query.limit ?? 50;
      const rows = (await listTargets(ctx.database.db, decodeCursor(request.query.cursor, idPattern('wh')), limit + 1)).map(presentTarget);
      return pageWithin(rows, limit, ctx.config.listMaxBytes, (t) => t.id, jsonBytes);
    });

    app.get('/admin/v1/webhooks/:id', {
      schema: { operationId: 'getWebhook', summary: 'One webhook target (never its secret)', tags: ['webhooks'], security, params: IdParams, response: { 200: ref(Webhook), ...errorResponses(401, 403, 404) } },
    }, async (request) => presentTarget(await requireTarget(ctx, request.params.id)));

    app.patch('/admin/v1/webhooks/:id', {
      schema: {
        operationId: 'updateWebhook',
        summary: 'Change name, the destination (type, url or broker fields), topics, enabled, the subscription or the receiver settings (enabling or a new URL re-checks the destination; a new signatureAlgorithm answers the new secret once)',
        tags: ['webhooks'],
        security,
        params: IdParams,
        body: Type.Object(
          { name: Type.Optional(Name), ...Destination, topics: Type.Optional(Topics), enabled: Type.Optional(Type.Boolean()), ...Subscription, ...Receiver },
          { additionalProperties: false },
        ),
        response: { 200: ref(WebhookWithSecret), ...errorResponses(401, 403, 404, 409, 413, 415, 422) },
      },
    }, async (request) => withMaterial(await patchTarget(ctx, request.params.id, request.body, checkFilter)));

    app.delete('/admin/v1/webhooks/:id', {
      schema: { operationId: 'deleteWebhook', summary: 'Delete a target; its unfinished jobs end dead (target_deleted)', tags: ['webhooks'], security, params: IdParams, response: { 204: Type.Null(), ...errorResponses(401, 403, 404) } },
    }, async (request, reply) => {
      await removeTarget(ctx, asId('wh', request.params.id));
      return reply.code(204).send(null);
    });

    app.post('/admin/v1/webhooks/:id/rotate-secret', {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'New signing secret (or ed25519 key pair); the old one keeps signing beside it for overlapSeconds',
        tags: ['webhooks'],
        security,
        params: IdParams,
        body: Type.Optional(Type.Object({ overlapSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 604_800 })) }, { additionalProperties: false })),
        response: { 200: ref(WebhookWithSecret), ...errorResponses(401, 403, 404, 422) },
      },
    }, async (request) => {
      return withMaterial(await rotateSecret(ctx, request.params.id, request.body?.overlapSeconds ?? 86_400));
    });

    app.post('/admin/v1/webhooks/:id/test', {
      schema: {
        operationId: 'sendWebhookTest',
        summary: 'Queue a signed webhook.test delivery to this target',
        tags: ['webhooks'],
        security,
        params: IdParams,
        response: { 202: Type.Object({ deliveryId: Type.String() }, { additionalProperties: false }), ...errorResponses(401, 403, 404) },
      },
    }, async (request, reply) => reply.code(202).send({ deliveryId: await sendTest(ctx, outbox.forRequest(requestSpan(request)), request.params.id) }));
  };
