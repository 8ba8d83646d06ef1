/** Times are integer Unix milliseconds in both databases; booleans are 0/1. JSON is stored as text. */

export interface AdminsTable {
  id: string;
  email: string;
  password_hash: string;
  created_at: number;
  /** When the admin last logged in; null: never (migration 016). */
  last_login_at: number | null;
}

export interface SessionsTable {
  /** SHA-256 of the cookie value: a database dump yields no usable session. */
  id_hash: string;
  admin_id: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

export interface LoginFailuresTable {
  id: string;
  key: string;
  at: number;
}

export interface SetupTokensTable {
  token_hash: string;
  expires_at: number;
  used_at: number | null;
}

export interface ApiTokensTable {
  id: string;
  name: string;
  token_hash: string;
  scopes: string;
  collections: string | null;
  created_at: number;
  last_used_at: number | null;
}

/** Tokens for automation on the admin API (migration 018); scopes is a JSON array of admin scopes. */
export interface AdminTokensTable {
  id: string;
  name: string;
  /** SHA-256 of the token: a database dump yields no usable token. */
  token_hash: string;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  /** The admin whose session created it. */
  created_by: string;
}

export interface CollectionsTable {
  name: string;
  fields: string;
  created_at: number;
  updated_at: number;
}

export interface RecordsTable {
  id: string;
  collection: string;
  version: number;
  data: string;
  created_at: number;
  updated_at: number;
}

export interface IdempotencyKeysTable {
  token_id: string;
  key: string;
  request_hash: string;
  status: number;
  response: string;
  created_at: number;
}

export interface WebhooksTable {
  id: string;
  name: string;
  url: string;
  topics: string;
  enabled: number;
  /** Null once the target is deleted: its secrets are erased, its row stays for its jobs' sake. */
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: number | null;
  created_at: number;
  updated_at: number;
  /** Set when the target is deleted (soft): every route treats it as gone. */
  deleted_at: number | null;
  /** Migration 006 (SPEC §9): JSON arrays or null (all); a filter expression or null; `none` | `record`. */
  collections: string | null;
  filter: string | null;
  changed_fields: string | null;
  ordering: string;
  /** Why and since when it is disabled (migration 007); both null while enabled. */
  disabled_reason: 'manual' | 'failing' | 'gone' | null;
  disabled_at: number | null;
  /** The auto-disable rule's counters: the first failed attempt after the last success (null while healthy), and failed attempts since. */
  failing_since: number | null;
  failed_attempts: number;
  /** Migration 015 (SPEC §13): `svc` | `standard` | `both`; `hmac-sha256` | `ed25519`. */
  signature_scheme: string;
  signature_algorithm: string;
  /** An ed25519 target's public key (`whpk_…`); its private key is in secret_sealed. */
  public_key: string | null;
  /** Static headers: the JSON object sealed, and its names with masked values (what answers show). */
  headers_sealed: string | null;
  headers_shown: string | null;
  /** The rate limit (null: none), and the shared bucket: the Unix second it counts, attempts started in it. */
  rate_per_second: number | null;
  rate_window: number | null;
  rate_used: number;
  /** Migration 017 (SPEC §14): `https` | `nats` | `rabbitmq` | `redis`; a broker target's url is ''. */
  type: string;
  /** The configured broker's name (SVC_BROKERS), and where in it: null where the kind has no such field. */
  broker: string | null;
  subject: string | null;
  exchange: string | null;
  routing_key: string | null;
  stream: string | null;
  max_length: number | null;
}

export interface EventsTable {
  id: string;
  topic: string;
  collection: string;
  record_id: string;
  /** The envelope's `payload` as JSON text, kept once for the feed and all of the event's jobs (null in rows written before migration 005 when no target wanted them). */
  payload: string | null;
  created_at: number;
  /** Feed position (migration 005): ordered by (tx, position); null for events written before the feed. */
  tx: number | null;
  position: number | null;
  /** The feed event's JSON before its payload (migration 012, envelope.ts feedEventPrefix); null for events written before it and for events not in the feed. */
  json_prefix: string | null;
  /** The writing span's W3C context (migration 019, SPEC §15); null when the write was not traced and in older rows. */
  traceparent: string | null;
  tracestate: string | null;
}

/** `held` (migration 006): an ordered target's job waiting for the older unfinished job of its record. */
export type JobState = 'pending' | 'delivering' | 'delivered' | 'dead' | 'held';

export interface DeliveryJobsTable {
  id: string;
  webhook_id: string;
  event_id: string;
  topic: string;
  collection: string;
  record_id: string;
  state: JobState;
  attempt_count: number;
  /** attempt_count at which the current round of the schedule began (a manual retry starts a new round). */
  round_start: number;
  next_attempt_at: number;
  lease_id: string | null;
  lease_expires_at: number | null;
  last_error_code: string | null;
  last_error_message: string | null;
  created_at: number;
  updated_at: number;
  /** 1 when the job takes part in its record's ordering (a record event's job of a target ordering by record; migration 011). */
  ordered: number;
}

/**
 * The attempt that delivered a job, kept on its row by the completion (migration 020) instead of an attempt row of its
 * own; null until then, and on jobs delivered before the migration or by an older process (theirs are rows). Its
 * number is the job's `attempt_count`. Read through the view `delivery_attempts`, never one by one.
 */
export interface JobSuccessColumns {
  success_started_at: number | null;
  success_duration_ms: number | null;
  success_status_code: number | null;
  success_snippet: string | null;
  success_remote_address: string | null;
  success_dns_ms: number | null;
  success_connect_ms: number | null;
  success_tls_ms: number | null;
  success_first_byte_ms: number | null;
}

export interface DeliveryAttemptsTable {
  job_id: string;
  number: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  error_code: string | null;
  error_message: string | null;
  response_snippet: string;
  /** The job's target, copied when the attempt is written (migration 008): target health reads a time range of it. */
  webhook_id: string | null;
  /** Attempt diagnostics (migration 008): the address dialled and each phase's duration; null where it did not happen. */
  remote_address: string | null;
  dns_ms: number | null;
  connect_ms: number | null;
  tls_ms: number | null;
  first_byte_ms: number | null;
}

/** One row (migration 023): moved by every committed change to `collections`. */
export interface CollectionsVersionTable {
  id: number;
  version: number;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface Tables {
  admins: AdminsTable;
  sessions: SessionsTable;
  login_failures: LoginFailuresTable;
  setup_tokens: SetupTokensTable;
  api_tokens: ApiTokensTable;
  admin_tokens: AdminTokensTable;
  collections: CollectionsTable;
  collections_version: CollectionsVersionTable;
  records: RecordsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhooks: WebhooksTable;
  events: EventsTable;
  delivery_jobs: DeliveryJobsTable & JobSuccessColumns;
  /** Failed attempts, and successes recorded before migration 020 or by older processes (the table's name until 020). */
  delivery_attempts_rows: DeliveryAttemptsTable;
  /** A view (migration 020): `delivery_attempts_rows` and the successes kept on job rows; inserts and deletes go to the rows. */
  delivery_attempts: DeliveryAttemptsTable;
  svc_meta: MetaTable;
}
