import { randomBytes } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { noJobOfEvent } from '../../db/job-state-arms.js';
import type { DeliveryId, WebhookId } from '../../lib/ids.js';
import type { AttemptTrace } from '../connection-trace.js';

/**
 * A job held under a lease, by a claim or a hand-off: what an attempt needs, and the token that fences every
 * transition that ends it. Each claim and each hand-off gets a token of its own, so a write made under an earlier
 * claim of the same job (a lease that expired, was rescued and claimed again, even by the same process) matches
 * no row and changes nothing.
 */
export interface HeldJob {
  readonly id: DeliveryId;
  readonly webhookId: WebhookId;
  readonly lease: string;
  readonly leaseExpiresAt: number;
  /** Attempts made before this one, in all rounds; this attempt's number is attemptCount + 1. */
  readonly attemptCount: number;
  /** attemptCount at which the current round of the schedule began (a manual retry starts a new round). */
  readonly roundStart: number;
  /** The exact bytes every attempt of this job sends. */
  readonly body: Buffer;
  /** The W3C context of the write that made the job's event (migration 019, SPEC §15): the attempt spans' parent. */
  readonly traceparent?: string | null;
  readonly tracestate?: string | null;
}

/** What names one claim of one job: the two a transition's guard matches. */
export type HeldRef = Pick<HeldJob, 'id' | 'lease'>;

/**
 * One attempt as it is stored (a row of `delivery_attempts_rows`, or a delivered job's `success_*` columns; the view
 * `delivery_attempts` shows both); its number is the job's attempt count after the transition.
 */
export interface AttemptRecord {
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: { code: string; message: string } | null;
  responseSnippet: string;
  /** Diagnostics the client reported: the address dialled and the phases' timings (none for an attempt never sent). */
  trace?: AttemptTrace;
}

export const newLeaseToken = (): string => `lease_${randomBytes(12).toString('base64url')}`;

/**
 * In SQL: the job's topic (column `column`) is a record event's (`record.*`, as isRecordEvent says in JavaScript),
 * the only jobs that take part in their record's ordering (the `ordered` mark, migration 011).
 */
export const recordTopic = (column: string): RawBuilder<boolean> => sql<boolean>`${sql.ref(column)} like 'record.%'`;

/**
 * The ids of a target's unfinished jobs (pending, held, delivering), each state from its own partial index (migrations
 * 003, 006): the cost follows the target's backlog, never its history of delivered jobs (which the target's index,
 * `delivery_jobs_webhook`, also holds; on PostgreSQL it holds no job in flight, migration 021).
 */
export const unfinishedJobIds = (webhookId: WebhookId): RawBuilder<{ id: string }> =>
  sql`select id from delivery_jobs where webhook_id = ${webhookId} and state = 'pending'
      union all select id from delivery_jobs where webhook_id = ${webhookId} and state = 'held'
      union all select id from delivery_jobs where state = 'delivering' and webhook_id = ${webhookId}`;

/**
 * No job of this target for the event in `eventColumn` (replay's guard; noJobOfEvent: settled jobs probed per event,
 * the target's jobs in flight read once per statement as a set). Per event, a replay of 50,000 events took 49-51 s on
 * PostgreSQL beside a worker whose unwritten results kept 40,000 of its jobs in flight (1.2-1.4 s on SQLite). The set
 * is read from the leases' index (jobs in flight only, on both databases): `webhook_id || ''` keeps SQLite off the
 * target's index, which holds all its jobs (there a batch's insert read every job the replay had made so far: with
 * 5,000, 1.8 ms against 1.4 ms).
 */
export const noJobOfTarget = (eventColumn: string, webhookId: string): RawBuilder<boolean> =>
  noJobOfEvent(eventColumn, sql<boolean>`j.webhook_id = ${webhookId}`, sql<boolean>`j.webhook_id || '' = ${webhookId}`);
