/** Shapes of the admin API (SPEC §2–§4). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  /** `position`: where an invalid_query fault starts, in code points (docs/queries.md). */
  errors?: { path: string; message: string; position?: number }[];
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface SessionInfo {
  csrfToken: string;
  expiresAt: string;
  admin: { id: string; email: string };
}

export const FIELD_TYPES = ['text', 'number', 'integer', 'boolean', 'datetime', 'json'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface Field {
  name: string;
  type: FieldType;
  required: boolean;
  /** svc keeps a database index on it for filters and sorts (at most 16 per collection, never json). */
  indexed?: boolean;
}

export interface Collection {
  name: string;
  fields: Field[];
  createdAt: string;
  updatedAt: string;
  recordCount?: number;
}

export interface RecordItem {
  id: string;
  collection: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  data: Record<string, unknown>;
}

/** GET /admin/v1/admins (SPEC §17). */
export interface AdminUser {
  id: string;
  email: string;
  createdAt: string;
  lastLoginAt: string | null;
}

export interface ApiToken {
  id: string;
  name: string;
  scopes: string[];
  collections: string[] | null;
  createdAt: string;
  lastUsedAt: string | null;
  token?: string;
}

/** An admin token (SPEC §16): `token` only in the answer that created it. */
export interface AdminToken {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  /** The creating admin's id, or `cli`. */
  createdBy: string;
  token?: string;
}

export const TOPICS = ['record.created', 'record.updated', 'record.deleted', 'webhook.test', 'webhook.disabled', 'delivery.dead', 'collection.deleted'] as const;

/** SPEC §13: which headers sign a delivery, and with what. ed25519 goes with "standard" only. */
export const SIGNATURE_SCHEMES = ['svc', 'standard', 'both'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
export const SIGNATURE_ALGORITHMS = ['hmac-sha256', 'ed25519'] as const;
export type SignatureAlgorithm = (typeof SIGNATURE_ALGORITHMS)[number];
/** The server's bounds for SPEC §13's static headers and rate limit. */
export const HEADERS_MAX = 20;
export const HEADER_VALUE_MAX_BYTES = 1024;
export const RATE_PER_SECOND_MAX = 10_000;

/** SPEC §14: where a target's deliveries go. `https` POSTs to `url`; the others publish into a configured broker. */
export const TARGET_TYPES = ['https', 'nats', 'rabbitmq', 'redis'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];
export type BrokerKind = Exclude<TargetType, 'https'>;
export const TARGET_TYPE_LABELS: Readonly<Record<TargetType, string>> = { https: 'HTTPS', nats: 'NATS JetStream', rabbitmq: 'RabbitMQ', redis: 'Redis Streams' };
/** GET /admin/v1/brokers: what SVC_BROKERS configures, names and kinds only (the URLs hold credentials). */
export interface Broker {
  name: string;
  kind: BrokerKind;
}

export interface Webhook {
  id: string;
  name: string;
  type: TargetType;
  /** null for a broker target. */
  url: string | null;
  /** A broker target's broker name and address fields (SPEC §14); null where the type has no such field. */
  broker: string | null;
  subject: string | null;
  exchange: string | null;
  routingKey: string | null;
  stream: string | null;
  maxLength: number | null;
  topics: string[];
  enabled: boolean;
  /** SPEC §9: null means all collections / any change / no filter. */
  collections: string[] | null;
  filter: string | null;
  changedFields: string[] | null;
  ordering: 'none' | 'record';
  signatureScheme: SignatureScheme;
  signatureAlgorithm: SignatureAlgorithm;
  /** An ed25519 target's public key (`whpk_…`), in every answer: it is not secret. Else null. */
  publicKey: string | null;
  /** Static headers; every value masked as `…a1b2` (the last four characters): answers never open them. */
  headers: Record<string, string> | null;
  rateLimit: { perSecond: number } | null;
  /** Why it is disabled: an admin (manual), or svc after failures (failing) or a 410 answer (gone). */
  disabledReason?: 'manual' | 'failing' | 'gone' | null;
  disabledAt?: string | null;
  createdAt: string;
  updatedAt: string;
  /** Only in the answer that made it: create, rotate, or a PATCH that changed the algorithm to hmac-sha256. */
  secret?: string;
}

export const DELIVERY_STATES = ['pending', 'delivering', 'delivered', 'dead'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface DeliveryError {
  code: string;
  message: string;
}

export interface Delivery {
  id: string;
  webhookId: string;
  topic: string;
  collection: string;
  recordId: string;
  state: DeliveryState;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastError: DeliveryError | null;
  /** SPEC §17: why a pending job is not attempted now (its target is disabled); null otherwise. */
  heldBy?: 'target_disabled' | null;
  createdAt: string;
  updatedAt: string;
}

/** POST /admin/v1/deliveries/retry (SPEC §17). */
export interface BulkRetryResult {
  retried: number;
  skipped: { id: string; reason: string }[];
}

/** An event of the feed (SPEC §7); GET /admin/v1/events/{id} adds its jobs (SPEC §17). */
export interface FeedEvent {
  id: string;
  topic: string;
  collection: string;
  recordId: string;
  occurredAt: string;
  payload?: unknown;
}

export interface EventDetail extends FeedEvent {
  deliveries: Delivery[];
}

/** The feed's pages: `nextCursor` is never null (docs/event-feed.md). */
export interface FeedPage {
  items: FeedEvent[];
  nextCursor: string;
}

export interface Attempt {
  number: number;
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: DeliveryError | null;
  responseSnippet: string | null;
  /** The address dialled; null when nothing was. */
  remoteAddress: string | null;
  /** Phase durations in ms; null where the phase did not happen. */
  timings: { dnsMs: number | null; connectMs: number | null; tlsMs: number | null; firstByteMs: number | null };
}

/** GET /admin/v1/webhooks/{id}/stats */
export interface TargetStats {
  attempts: { total: number; succeeded: number; failed: number };
  successRate: number | null;
  latencyMs: { p50: number | null; p95: number | null };
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  buckets: Array<{ start: string; succeeded: number; failed: number }>;
}

export interface DeliveryDetail extends Delivery {
  envelope: unknown;
  attempts: Attempt[];
}
