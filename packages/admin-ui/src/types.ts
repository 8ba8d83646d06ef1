/**
 * Shapes of the admin API (SPEC §2–§4, §13, §14, §16, §17), never written by hand: each is a name for a schema or an
 * answer of svc's own admin OpenAPI document, as svc-sdk's generator turns it into TypeScript
 * (packages/sdk/src/client/admin-openapi.ts, `npm run generate -w packages/sdk`; its drift test fails when the file and
 * the document differ). The import is types only: the bundle never contains svc-sdk. A route or member that changes
 * on the server shows here as a type error in `npm test` (test/typecheck.test.ts).
 *
 * What is left is the UI's own: labels, the lists a select offers (each checked against the generated union, so a
 * new value is a type error until it is offered), and the server's bounds that the form mentions.
 */
import type { components, paths } from 'svc-sdk/admin';

type Schemas = components['schemas'];

/** The JSON answer of a successful `method path` (200, 201 or 202). */
export type Answer<P extends keyof paths, M extends 'get' | 'post' | 'patch' | 'put' | 'delete'> = paths[P][M] extends {
  responses: infer R;
}
  ? R extends { 200: { content: { 'application/json': infer A } } }
    ? A
    : R extends { 201: { content: { 'application/json': infer A } } }
      ? A
      : R extends { 202: { content: { 'application/json': infer A } } }
        ? A
        : never
  : never;

/**
 * RFC 9457 problem details. `code` is the server's catalogue plus the two the UI makes itself: `network_error` (no
 * answer) and `unknown` (an answer that was not a problem document).
 */
export type Problem = Omit<Schemas['Problem'], 'code'> & { code: Schemas['Problem']['code'] | 'network_error' | 'unknown' };

/** One page of an admin list; `nextCursor` is null on the last page. */
export type { Page } from 'svc-sdk/admin';

export type SessionInfo = Schemas['Session'];

export type Field = Schemas['Field'];
export type FieldType = Field['type'];
export const FIELD_TYPES = ['text', 'number', 'integer', 'boolean', 'datetime', 'json'] as const satisfies readonly FieldType[];

export type Collection = Schemas['Collection'];
/** GET /admin/v1/api/schema: every collection and its fields. */
export type ApiSchema = Answer<'/admin/v1/api/schema', 'get'>;

export type RecordItem = Schemas['Record'];
/** A page of records; `totalCount` when the request asked for it (`count=true`). */
export type RecordList = Schemas['RecordList'];

/** GET /admin/v1/admins (SPEC §17). */
export type AdminUser = Schemas['AdminAccount'];

export type ApiToken = Schemas['ApiToken'];
/** The answer that created an API token: the only one with `token`. */
export type ApiTokenCreated = Schemas['ApiTokenCreated'];

/** An admin token (SPEC §16); `createdBy` is the creating admin's id, or `cli`. */
export type AdminToken = Answer<'/admin/v1/admin-tokens', 'get'>['items'][number];
/** The answer that created an admin token: the only one with `token`. */
export type AdminTokenCreated = Answer<'/admin/v1/admin-tokens', 'post'>;

export type Topic = Schemas['DeliveryJob']['topic'];
/** Every topic, for the deliveries and events pages' topic filters. */
export const TOPICS = [
  'record.created', 'record.updated', 'record.deleted', 'webhook.test', 'webhook.disabled', 'delivery.dead', 'collection.deleted',
] as const satisfies readonly Topic[];

export type Webhook = Schemas['Webhook'];
/** Create, rotate, and a PATCH that made a new HMAC secret answer the target with its `secret`, that once. */
export type WebhookWithSecret = Schemas['WebhookWithSecret'];
export type SignatureScheme = Webhook['signatureScheme'];
export type SignatureAlgorithm = Webhook['signatureAlgorithm'];
/** The server's bounds for SPEC §13's static headers and rate limit, which the form mentions. */
export const HEADERS_MAX = 20;
export const HEADER_VALUE_MAX_BYTES = 1024;
export const RATE_PER_SECOND_MAX = 10_000;

/** SPEC §14: where a target's deliveries go. `https` POSTs to `url`; the others publish into a configured broker. */
export type TargetType = Webhook['type'];
export type BrokerKind = Exclude<TargetType, 'https'>;
export const TARGET_TYPE_LABELS: Readonly<Record<TargetType, string>> = { https: 'HTTPS', nats: 'NATS JetStream', rabbitmq: 'RabbitMQ', redis: 'Redis Streams' };
/** GET /admin/v1/brokers: what SVC_BROKERS configures, names and kinds only (the URLs hold credentials). */
export type Broker = Answer<'/admin/v1/brokers', 'get'>['items'][number];
/** GET /admin/v1/webhooks/{id}/stats */
export type TargetStats = Answer<'/admin/v1/webhooks/{id}/stats', 'get'>;
/** A page of every target's statistics, in the targets list's order (GET /admin/v1/webhooks/stats). */
export type TargetStatsPage = Answer<'/admin/v1/webhooks/stats', 'get'>;
/** POST /admin/v1/webhooks/{id}/recover and …/replay: how many jobs were made (and replay's `since`). */
export type RecoverResult = Answer<'/admin/v1/webhooks/{id}/recover', 'post'>;
export type ReplayResult = Answer<'/admin/v1/webhooks/{id}/replay', 'post'>;
/** POST /admin/v1/webhooks/{id}/test */
export type TestSent = Answer<'/admin/v1/webhooks/{id}/test', 'post'>;

export type Delivery = Schemas['DeliveryJob'];
export type DeliveryState = Delivery['state'];
export const DELIVERY_STATES = ['pending', 'delivering', 'delivered', 'dead'] as const satisfies readonly DeliveryState[];
export type DeliveryDetail = Schemas['DeliveryJobDetail'];
export type Attempt = DeliveryDetail['attempts'][number];
/** POST /admin/v1/deliveries/retry (SPEC §17). */
export type BulkRetryResult = Schemas['DeliveryRetryResult'];

/** An event of the feed (SPEC §7); GET /admin/v1/events/{id} adds its jobs (SPEC §17). */
export type FeedEvent = Schemas['Event'];
export type EventDetail = Schemas['EventDetail'];
/** The feed's pages: `nextCursor` is never null (docs/event-feed.md). */
export type FeedPage = Schemas['EventList'];

/** `true` only when `List` holds every member of `Union`: a list above that misses a value fails to compile. */
type Complete<List extends readonly unknown[], Union> = [Exclude<Union, List[number]>] extends [never] ? true : false;
type Assert<T extends true> = T;
export type ListsComplete = [
  Assert<Complete<typeof FIELD_TYPES, FieldType>>,
  Assert<Complete<typeof TOPICS, Topic>>,
  Assert<Complete<typeof DELIVERY_STATES, DeliveryState>>,
];
