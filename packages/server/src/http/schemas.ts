import { Type, type Static, type TSchema } from 'typebox';
import { ERRORS } from '../errors.js';
import { FIELD_TYPES } from '../records/fields.js';
import { TOPICS } from '../webhooks/topics.js';

/**
 * The single source of truth for the wire format: these schemas validate requests, serialize responses
 * and become the OpenAPI documents. Shared ones carry an $id and appear once under components.schemas.
 */

const DateTime = Type.String({ format: 'date-time' });
const strict = { additionalProperties: false } as const;

/** A $ref to a shared schema that keeps its static type for handlers. */
export const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>({ $ref: `${(schema as { $id?: string }).$id}#` });

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Enum(Object.keys(ERRORS) as Array<keyof typeof ERRORS>),
    requestId: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String(), position: Type.Optional(Type.Integer({ minimum: 0 })) }, strict))),
  },
  { $id: 'Problem', ...strict, description: 'RFC 9457 problem details; branch on `code`.' },
);

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 400 })),
  },
  strict,
);

/** The records list's parameters: SPEC §4's paging plus §8's filter, sort, fields and count. */
export const RecordListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    // Keyset cursors carry the last row's sort values, so they can be longer than other lists' cursors.
    cursor: Type.Optional(Type.String({ maxLength: 16384 })),
    filter: Type.Optional(Type.String({ maxLength: 8192, description: 'A filter expression (docs/queries.md); at most 2048 code points' })),
    sort: Type.Optional(Type.String({ maxLength: 400, description: 'Up to 3 field names, each optionally prefixed by - (descending)' })),
    fields: Type.Optional(Type.String({ maxLength: 13000, description: 'Data fields to return, comma-separated' })),
    count: Type.Optional(Type.Boolean({ description: 'Add totalCount, the number of records matching the filter' })),
  },
  strict,
);

export const listOf = <T extends TSchema>(item: T, id: string) =>
  Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) }, { $id: id, ...strict });

export const Field = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 63 }),
    type: Type.Enum(FIELD_TYPES),
    required: Type.Boolean({ default: false }),
    indexed: Type.Boolean({ default: false, description: 'svc keeps a database index for filtering and sorting on this field (at most 16 per collection)' }),
  },
  { $id: 'Field', ...strict },
);

export const Collection = Type.Object(
  { name: Type.String(), fields: Type.Array(Field), createdAt: DateTime, updatedAt: DateTime },
  { $id: 'Collection', ...strict },
);

export const RecordSchema = Type.Object(
  {
    id: Type.String({ pattern: '^rec_' }),
    collection: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    createdAt: DateTime,
    updatedAt: DateTime,
    data: Type.Object({}, { additionalProperties: true }),
  },
  { $id: 'Record', ...strict },
);

/** A write's answer: `data` is omitted for a token without records:read, so writing never becomes a way to read. */
export const RecordWritten = Type.Object(
  { ...RecordSchema.properties, data: Type.Optional(RecordSchema.properties.data) },
  { $id: 'RecordWritten', ...strict, description: 'The record as written; `data` is omitted when the token lacks records:read.' },
);

export const RecordWrite = Type.Object({ data: Type.Record(Type.String(), Type.Unknown()) }, { ...strict, description: 'The record fields to set.' });

export const Scope = Type.Union([Type.Literal('records:read'), Type.Literal('records:write'), Type.Literal('events:read')]);

export const ApiToken = Type.Object(
  {
    id: Type.String({ pattern: '^tok_' }),
    name: Type.String(),
    scopes: Type.Array(Scope),
    collections: Type.Union([Type.Array(Type.String()), Type.Null()]),
    createdAt: DateTime,
    lastUsedAt: Type.Union([DateTime, Type.Null()]),
  },
  { $id: 'ApiToken', ...strict },
);

export const ApiTokenCreated = Type.Object(
  { ...ApiToken.properties, token: Type.String({ pattern: '^svc_pat_', description: 'Shown in this answer only.' }) },
  { $id: 'ApiTokenCreated', ...strict },
);

export const TopicSchema = Type.Enum(TOPICS);

export const SignatureScheme = Type.Union([Type.Literal('svc'), Type.Literal('standard'), Type.Literal('both')], {
  description: 'Which headers sign a delivery: `svc` (Svc-Delivery, Svc-Timestamp, Svc-Signature), `standard` (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) or `both`.',
});
export const SignatureAlgorithm = Type.Union([Type.Literal('hmac-sha256'), Type.Literal('ed25519')], {
  description: '`ed25519` (with `standard` only): a key pair instead of a secret; `v1a,` signatures verified with `publicKey`.',
});
export const RateLimit = Type.Object(
  { perSecond: Type.Integer({ minimum: 1, maximum: 10_000, description: 'Attempts started per second at most, across every process.' }) },
  { additionalProperties: false },
);

export const TargetTypeSchema = Type.Union([Type.Literal('https'), Type.Literal('nats'), Type.Literal('rabbitmq'), Type.Literal('redis')], {
  description: 'Where deliveries go: `https` (POST to `url`) or into a broker the operator configured (SVC_BROKERS): NATS JetStream, RabbitMQ or Redis Streams.',
});

const NullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/** A target's destination as every answer shows it (SPEC §14): null where its type has no such field. */
const DestinationFields = {
  type: TargetTypeSchema,
  url: NullableText('https: the receiver\'s URL; null for a broker target.'),
  broker: NullableText('A broker target: the configured broker\'s name (never its address).'),
  subject: NullableText('nats: the subject published to; `{collection}` and `{topic}` replaced per event (a topic adds a token per dot).'),
  exchange: NullableText('rabbitmq: the exchange published to (`""`: the default exchange, routing by queue name).'),
  routingKey: NullableText('rabbitmq: the routing key; `{collection}` and `{topic}` replaced per event; null: empty.'),
  stream: NullableText('redis: the stream key XADD appends to; `{collection}` and `{topic}` replaced per event.'),
  maxLength: Type.Union([Type.Integer(), Type.Null()], { description: 'redis: the stream is trimmed to about this many entries (`MAXLEN ~`); null: never trimmed.' }),
};

export const Webhook = Type.Object(
  {
    id: Type.String({ pattern: '^wh_' }),
    name: Type.String(),
    ...DestinationFields,
    topics: Type.Array(TopicSchema),
    enabled: Type.Boolean(),
    collections: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'Only record events of these collections; null: all.' }),
    filter: Type.Union([Type.String(), Type.Null()], { description: 'Only record events whose record (or previous state) matches this expression.' }),
    changedFields: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'record.updated only when one of these fields changed; null: any.' }),
    ordering: Type.Union([Type.Literal('none'), Type.Literal('record')], { description: '`record`: one record\'s deliveries to this target one at a time, oldest version first.' }),
    signatureScheme: SignatureScheme,
    signatureAlgorithm: SignatureAlgorithm,
    publicKey: Type.Union([Type.String({ pattern: '^whpk_' }), Type.Null()], { description: 'An ed25519 target\'s public key: `whpk_` and the base64 of its 32 bytes. Not secret.' }),
    headers: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], { description: 'Static headers sent with every attempt; values masked: `…` and their last four characters.' }),
    rateLimit: Type.Union([RateLimit, Type.Null()]),
    disabledReason: Type.Union([Type.Literal('manual'), Type.Literal('failing'), Type.Literal('gone'), Type.Null()], {
      description: 'manual: an admin disabled it; failing: svc did, after SVC_WEBHOOK_DISABLE_AFTER without success; gone: svc did, on a 410 answer',
    }),
    disabledAt: Type.Union([DateTime, Type.Null()]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Webhook', ...strict },
);

export const WebhookWithSecret = Type.Object(
  {
    ...Webhook.properties,
    secret: Type.Optional(Type.String({ pattern: '^whsec_', description: 'The signing secret (an HMAC target\'s): shown in this answer only. An ed25519 target has `publicKey` instead.' })),
  },
  { $id: 'WebhookWithSecret', ...strict },
);

export const JobError = Type.Object({ code: Type.String(), message: Type.String() }, strict);

export const DeliveryJob = Type.Object(
  {
    id: Type.String({ pattern: '^del_' }),
    webhookId: Type.String(),
    topic: TopicSchema,
    collection: Type.String(),
    recordId: Type.String(),
    state: Type.Enum(['pending', 'delivering', 'delivered', 'dead']),
    attemptCount: Type.Integer(),
    nextAttemptAt: Type.Union([DateTime, Type.Null()]),
    lastError: Type.Union([JobError, Type.Null()]),
    heldBy: Type.Union([Type.Literal('target_disabled'), Type.Null()], { description: '`target_disabled`: a pending job of a disabled target, waiting until it is enabled (its nextAttemptAt may be past); else null.' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'DeliveryJob', ...strict },
);

const NullableMs = Type.Union([Type.Integer(), Type.Null()]);

export const Attempt = Type.Object(
  {
    number: Type.Integer(),
    startedAt: DateTime,
    durationMs: Type.Integer(),
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([JobError, Type.Null()]),
    responseSnippet: Type.String(),
    remoteAddress: Type.Union([Type.String(), Type.Null()], { description: 'The address dialled; null when no connection was made' }),
    timings: Type.Object(
      { dnsMs: NullableMs, connectMs: NullableMs, tlsMs: NullableMs, firstByteMs: NullableMs },
      { ...strict, description: 'Phase durations in ms; null where a phase did not happen (an IP literal has no DNS, a reused connection no connect or TLS)' },
    ),
  },
  { $id: 'Attempt', ...strict },
);

export const DeliveryJobDetail = Type.Object(
  { ...DeliveryJob.properties, envelope: Type.Object({}, { additionalProperties: true }), attempts: Type.Array(Attempt) },
  { $id: 'DeliveryJobDetail', ...strict },
);

export const Session = Type.Object(
  { csrfToken: Type.String(), expiresAt: DateTime, admin: Type.Object({ id: Type.String(), email: Type.String() }, strict) },
  { $id: 'Session', ...strict },
);

export const Capabilities = Type.Object(
  {
    apiVersion: Type.Literal('1'),
    features: Type.Array(Type.String()),
    limits: Type.Record(Type.String(), Type.Number()),
    topics: Type.Array(TopicSchema),
  },
  { $id: 'Capabilities', ...strict },
);

/** A committed change, as the feed shows it; `payload` is the webhook envelope's `payload`, byte for byte. */
export const Event = Type.Object(
  {
    id: Type.String({ pattern: '^evt_' }),
    topic: TopicSchema,
    collection: Type.String(),
    recordId: Type.String({ pattern: '^rec_' }),
    occurredAt: DateTime,
    payload: Type.Object({}, { additionalProperties: true }),
    traceparent: Type.Optional(
      Type.String({
        pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
        description:
          'The W3C trace context of the write that made the event, when it was traced (SPEC §15). Absent for untraced writes and for events written before svc 0.2.0.',
      }),
    ),
  },
  { $id: 'Event', ...strict },
);

/** A feed page: `nextCursor` is never null, always a position to resume from. */
export const EventList = Type.Object({ items: Type.Array(ref(Event)), nextCursor: Type.String() }, { $id: 'EventList', ...strict });

export const RecordList = Type.Object(
  { items: Type.Array(ref(RecordSchema)), nextCursor: Type.Union([Type.String(), Type.Null()]), totalCount: Type.Optional(Type.Integer({ minimum: 0 })) },
  { $id: 'RecordList', ...strict },
);
export const CollectionList = listOf(ref(Collection), 'CollectionList');
export const ApiTokenList = listOf(ref(ApiToken), 'ApiTokenList');
export const WebhookList = listOf(ref(Webhook), 'WebhookList');
export const DeliveryJobList = listOf(ref(DeliveryJob), 'DeliveryJobList');

/** An event with its delivery jobs, as the deliveries list shows them (SPEC §17). */
export const EventDetail = Type.Object({ ...Event.properties, deliveries: Type.Array(ref(DeliveryJob)) }, { $id: 'EventDetail', ...strict });

/** What a bulk retry did: jobs sent back to pending, and why each other one was left as it was. */
export const DeliveryRetryResult = Type.Object(
  {
    retried: Type.Integer({ minimum: 0 }),
    skipped: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          reason: Type.Union([Type.Literal('not_dead'), Type.Literal('not_found'), Type.Literal('target_deleted')], {
            description: '`not_dead`: the job is pending, delivering or delivered; `not_found`: no such job; `target_deleted`: its target was deleted.',
          }),
        },
        strict,
      ),
    ),
  },
  { $id: 'DeliveryRetryResult', ...strict },
);

/** An admin account as the admins list shows it: never its password. */
export const AdminAccount = Type.Object(
  {
    id: Type.String({ pattern: '^adm_' }),
    email: Type.String(),
    createdAt: DateTime,
    lastLoginAt: Type.Union([DateTime, Type.Null()], { description: 'The last successful login; null: never logged in.' }),
  },
  { $id: 'AdminAccount', ...strict },
);
export const AdminAccountList = listOf(ref(AdminAccount), 'AdminAccountList');

/** Schemas with an $id, registered once at the root (for $ref everywhere) and listed in OpenAPI components. */
export const SHARED_SCHEMAS = [
  Problem, Field, Collection, RecordSchema, RecordWritten, ApiToken, ApiTokenCreated, Webhook, WebhookWithSecret, Attempt, DeliveryJob, DeliveryJobDetail, Session, Capabilities,
  RecordList, CollectionList, ApiTokenList, WebhookList, DeliveryJobList, Event, EventList,
  EventDetail, DeliveryRetryResult, AdminAccount, AdminAccountList,
];


/** Problem answers a route documents; every route may also answer 500 `internal` and 503 `unavailable`. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries([...statuses, 500, 503].map((s) => [s, { ...ref(Problem), description: 'Problem details' }]));

export type RecordWriteBody = Static<typeof RecordWrite>;
