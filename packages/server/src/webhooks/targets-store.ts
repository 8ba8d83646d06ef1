import { sql, type Kysely } from 'kysely';
import type { BrokerKind } from '../config/brokers.js';
import type { Tables, WebhooksTable } from '../db/tables.js';
import type { Topic } from './topics.js';
import type { WebhookId } from '../lib/ids.js';

export type Ordering = 'none' | 'record';

/** What of the record events a target receives (SPEC §9): null for "all" / "none set". */
export interface Subscription {
  collections: string[] | null;
  filter: string | null;
  changedFields: string[] | null;
  ordering: Ordering;
}

export type DisabledReason = 'manual' | 'failing' | 'gone';
export type SignatureScheme = 'svc' | 'standard' | 'both';
export type SignatureAlgorithm = 'hmac-sha256' | 'ed25519';

/** How a target's receiver wants its deliveries (SPEC §13). */
export interface ReceiverSettings {
  signatureScheme: SignatureScheme;
  signatureAlgorithm: SignatureAlgorithm;
  /** An ed25519 target's public key (`whpk_…`), else null. */
  publicKey: string | null;
  /** The static headers, a JSON object sealed as a whole (null: none). */
  headersSealed: string | null;
  /** The same names, each value masked as answers show it (`…a1b2`). */
  headersShown: Record<string, string> | null;
  /** Attempts per second across every process, or null for no limit. */
  ratePerSecond: number | null;
}

export type TargetType = 'https' | BrokerKind;

/**
 * Where a target delivers (SPEC §14): its URL, or a place in a broker the operator configured (SVC_BROKERS). Each
 * field is null where the type has none: `url` for https; `broker` and `subject` (nats), `exchange` and `routingKey`
 * (rabbitmq), `stream` and `maxLength` (redis).
 */
export interface Destination {
  type: TargetType;
  url: string | null;
  broker: string | null;
  subject: string | null;
  exchange: string | null;
  routingKey: string | null;
  stream: string | null;
  maxLength: number | null;
}

export interface TargetRow extends Subscription, ReceiverSettings, Destination {
  id: WebhookId;
  name: string;
  topics: Topic[];
  enabled: boolean;
  /** Why it is disabled, and since when (SPEC §10): null while enabled. */
  disabledReason: DisabledReason | null;
  disabledAt: number | null;
  /** The signing secret, or an ed25519 target's private key, sealed. */
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** Only live targets are read into a TargetRow: a deleted one has no secret and is gone for every caller. */
export const toTarget = (r: WebhooksTable): TargetRow => ({
  // The database's edge: a webhooks row's id is a target's (the column holds only ids newId('wh') made).
  id: r.id as WebhookId,
  name: r.name,
  ...destinationOf(r),
  topics: JSON.parse(r.topics) as Topic[],
  enabled: r.enabled === 1,
  disabledReason: r.disabled_reason,
  disabledAt: r.disabled_at === null ? null : Number(r.disabled_at),
  secretSealed: r.secret_sealed ?? '',
  previousSecretSealed: r.previous_secret_sealed,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  collections: r.collections === null ? null : (JSON.parse(r.collections) as string[]),
  filter: r.filter,
  changedFields: r.changed_fields === null ? null : (JSON.parse(r.changed_fields) as string[]),
  ordering: r.ordering === 'record' ? 'record' : 'none',
  signatureScheme: r.signature_scheme as SignatureScheme,
  signatureAlgorithm: r.signature_algorithm as SignatureAlgorithm,
  publicKey: r.public_key,
  headersSealed: r.headers_sealed,
  headersShown: r.headers_shown === null ? null : (JSON.parse(r.headers_shown) as Record<string, string>),
  ratePerSecond: r.rate_per_second === null ? null : Number(r.rate_per_second),
});

/** A broker target keeps '' in the NOT NULL url column (migration 017); everything else as stored. */
const destinationOf = (r: WebhooksTable): Destination => {
  const type = (r.type ?? 'https') as TargetType;
  return {
    type,
    url: type === 'https' ? r.url : null,
    broker: r.broker ?? null,
    subject: r.subject ?? null,
    exchange: r.exchange ?? null,
    routingKey: r.routing_key ?? null,
    stream: r.stream ?? null,
    maxLength: r.max_length === null || r.max_length === undefined ? null : Number(r.max_length),
  };
};

const jsonOrNull = (list: readonly string[] | null): string | null => (list === null ? null : JSON.stringify(list));

export async function insertTarget(db: Kysely<Tables>, t: TargetRow): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({
      id: t.id,
      name: t.name,
      url: t.url ?? '',
      topics: JSON.stringify(t.topics),
      enabled: t.enabled ? 1 : 0,
      disabled_reason: t.disabledReason,
      disabled_at: t.disabledAt,
      failing_since: null,
      failed_attempts: 0,
      secret_sealed: t.secretSealed,
      previous_secret_sealed: t.previousSecretSealed,
      previous_secret_expires_at: t.previousSecretExpiresAt,
      created_at: t.createdAt,
      updated_at: t.updatedAt,
      deleted_at: null,
      collections: jsonOrNull(t.collections),
      filter: t.filter,
      changed_fields: jsonOrNull(t.changedFields),
      ordering: t.ordering,
      signature_scheme: t.signatureScheme,
      signature_algorithm: t.signatureAlgorithm,
      public_key: t.publicKey,
      headers_sealed: t.headersSealed,
      headers_shown: t.headersShown === null ? null : JSON.stringify(t.headersShown),
      rate_per_second: t.ratePerSecond,
      rate_window: null,
      rate_used: 0,
      type: t.type,
      broker: t.broker,
      subject: t.subject,
      exchange: t.exchange,
      routing_key: t.routingKey,
      stream: t.stream,
      max_length: t.maxLength,
    })
    .execute();
}

export async function findTarget(db: Kysely<Tables>, id: string): Promise<TargetRow | null> {
  const row = await live(db).where('id', '=', id).executeTakeFirst();
  return row ? toTarget(row) : null;
}

export async function findTargets(db: Kysely<Tables>, ids: readonly string[]): Promise<TargetRow[]> {
  if (ids.length === 0) return [];
  return (await live(db).where('id', 'in', ids).execute()).map(toTarget);
}

export async function listTargets(db: Kysely<Tables>, afterId: string | null, limit: number): Promise<TargetRow[]> {
  let q = live(db).orderBy('id').limit(limit);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return (await q.execute()).map(toTarget);
}

/** The ids of a page of live targets, in the order and from the cursor of listTargets (the health overview's pages). */
export async function listTargetIds(db: Kysely<Tables>, afterId: string | null, limit: number): Promise<string[]> {
  let q = db.selectFrom('webhooks').select('id').where('deleted_at', 'is', null).orderBy('id').limit(limit);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return (await q.execute()).map((r) => r.id);
}

/** Every enabled target (the worker's view; the table holds targets, not traffic, so it stays small). */
export async function enabledTargets(db: Kysely<Tables>): Promise<TargetRow[]> {
  return (await live(db).where('enabled', '=', 1).orderBy('id').execute()).map(toTarget);
}

/** Enabled targets subscribed to `topic`. Topics are a short JSON list, filtered here rather than in SQL. */
export async function subscribedTargets(db: Kysely<Tables>, topic: Topic): Promise<TargetRow[]> {
  return (await enabledTargets(db)).filter((t) => t.topics.includes(topic));
}

export async function updateTarget(
  db: Kysely<Tables>,
  id: string,
  patch: Partial<Pick<TargetRow, 'name' | 'topics' | 'enabled' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt' | keyof Subscription | keyof ReceiverSettings | keyof Destination>>,
  now: number,
): Promise<boolean> {
  const set: Partial<WebhooksTable> = { updated_at: now };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.url !== undefined) set.url = patch.url ?? '';
  if (patch.type !== undefined) set.type = patch.type;
  if (patch.broker !== undefined) set.broker = patch.broker;
  if (patch.subject !== undefined) set.subject = patch.subject;
  if (patch.exchange !== undefined) set.exchange = patch.exchange;
  if (patch.routingKey !== undefined) set.routing_key = patch.routingKey;
  if (patch.stream !== undefined) set.stream = patch.stream;
  if (patch.maxLength !== undefined) set.max_length = patch.maxLength;
  if (patch.topics !== undefined) set.topics = JSON.stringify(patch.topics);
  if (patch.secretSealed !== undefined) set.secret_sealed = patch.secretSealed;
  if (patch.previousSecretSealed !== undefined) set.previous_secret_sealed = patch.previousSecretSealed;
  if (patch.previousSecretExpiresAt !== undefined) set.previous_secret_expires_at = patch.previousSecretExpiresAt;
  if (patch.collections !== undefined) set.collections = jsonOrNull(patch.collections);
  if (patch.filter !== undefined) set.filter = patch.filter;
  if (patch.changedFields !== undefined) set.changed_fields = jsonOrNull(patch.changedFields);
  if (patch.ordering !== undefined) set.ordering = patch.ordering;
  if (patch.signatureScheme !== undefined) set.signature_scheme = patch.signatureScheme;
  if (patch.signatureAlgorithm !== undefined) set.signature_algorithm = patch.signatureAlgorithm;
  if (patch.publicKey !== undefined) set.public_key = patch.publicKey;
  if (patch.headersSealed !== undefined) set.headers_sealed = patch.headersSealed;
  if (patch.headersShown !== undefined) set.headers_shown = patch.headersShown === null ? null : JSON.stringify(patch.headersShown);
  if (patch.ratePerSecond !== undefined) set.rate_per_second = patch.ratePerSecond;
  let q = db.updateTable('webhooks').set(set);
  // An admin's switch: disabling keeps the reason of a target already disabled; enabling clears it and the failure
  // counters, so the auto-disable rule starts afresh instead of striking again at the next failed attempt.
  if (patch.enabled === false) {
    q = q.set({ enabled: 0, disabled_reason: sql`coalesce(disabled_reason, 'manual')`, disabled_at: sql`coalesce(disabled_at, ${now})` });
  } else if (patch.enabled === true) {
    q = q.set({ enabled: 1, disabled_reason: null, disabled_at: null, failing_since: null, failed_attempts: 0 });
  }
  const res = await q.where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Soft delete: the row stays, so every job's webhook_id still names it (a foreign key says so), but it is disabled,
 * its secrets are erased, and every read above treats it as gone.
 */
export async function deleteTarget(db: Kysely<Tables>, id: string, now: number): Promise<boolean> {
  const res = await db
    .updateTable('webhooks')
    .set({ deleted_at: now, enabled: 0, secret_sealed: null, previous_secret_sealed: null, previous_secret_expires_at: null, headers_sealed: null, headers_shown: null, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Erases every previous secret whose overlap has ended (SPEC §11): past its expiry nothing signs with it, so keeping
 * it would only leave a usable key in the database and its backups. Deleted targets have none left to erase.
 */
export async function eraseExpiredPreviousSecrets(db: Kysely<Tables>, now: number): Promise<number> {
  const res = await db
    .updateTable('webhooks')
    .set({ previous_secret_sealed: null, previous_secret_expires_at: null })
    .where('previous_secret_expires_at', '<=', now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

const live = (db: Kysely<Tables>) => db.selectFrom('webhooks').selectAll().where('deleted_at', 'is', null);
