import type { DeliveryJobsTable } from '../db/tables.js';
import { iso } from '../lib/clock.js';
import type { TargetRow } from './targets-store.js';

/**
 * A target and a job as the admin API shows them. Here rather than in http/ because operational events carry the
 * same shapes in their payloads (SPEC §10), and the two must never drift apart. Never a secret.
 */
export const targetView = (t: TargetRow) => ({
  id: t.id,
  name: t.name,
  type: t.type,
  // Where it delivers (SPEC §14): a URL, or a broker by name and a place in it; null where the type has none.
  url: t.url,
  broker: t.broker,
  subject: t.subject,
  exchange: t.exchange,
  routingKey: t.routingKey,
  stream: t.stream,
  maxLength: t.maxLength,
  topics: t.topics,
  enabled: t.enabled,
  disabledReason: t.disabledReason,
  disabledAt: t.disabledAt === null ? null : iso(t.disabledAt),
  collections: t.collections,
  filter: t.filter,
  changedFields: t.changedFields,
  ordering: t.ordering,
  signatureScheme: t.signatureScheme,
  signatureAlgorithm: t.signatureAlgorithm,
  publicKey: t.publicKey,
  // Masked (`…a1b2`): the values are sealed, and no answer opens them.
  headers: t.headersShown,
  rateLimit: t.ratePerSecond === null ? null : { perSecond: t.ratePerSecond },
  createdAt: iso(t.createdAt),
  updatedAt: iso(t.updatedAt),
});

export const jobView = (j: DeliveryJobsTable) => ({
  id: j.id,
  webhookId: j.webhook_id,
  topic: j.topic,
  collection: j.collection,
  recordId: j.record_id,
  // A held job (an ordered target's, waiting for its record's older job) is pending to the outside (SPEC §4).
  state: j.state === 'held' ? 'pending' : j.state,
  attemptCount: j.attempt_count,
  nextAttemptAt: j.state === 'pending' || j.state === 'held' ? iso(j.next_attempt_at) : null,
  lastError: j.last_error_code === null ? null : { code: j.last_error_code, message: j.last_error_message ?? '' },
  // What holds a pending job back (SPEC §17): the admin list knows its target's state and says target_disabled; a
  // job an operational event carries (dead, or just made) is never held.
  heldBy: null as 'target_disabled' | null,
  createdAt: iso(j.created_at),
  updatedAt: iso(j.updated_at),
});
