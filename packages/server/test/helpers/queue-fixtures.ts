import { sql, type Kysely } from 'kysely';
import type { DeliveryAttemptsTable, DeliveryJobsTable, JobState, Tables } from '../../src/db/tables.js';
import type { AttemptRecord } from '../../src/webhooks/queue/job.js';
import type { Topic } from '../../src/webhooks/topics.js';
import { createTestContext, type TestContext } from './context.js';
import type { Dialect } from './db.js';

/**
 * Rows for the queue's transition tests, inserted with plain SQL (as claim-plan.test.ts does) so a test states the
 * exact row it starts from and nothing of the code under test helps build it. Times are fixed: T0 is when rows were
 * written, NOW when the transition runs, so a changed `updated_at` shows.
 */
export const T0 = 1_700_000_000_000;
export const NOW = T0 + 60_000;

export async function seedTarget(
  db: Kysely<Tables>,
  id: string,
  opts: { enabled?: boolean; deletedAt?: number | null; topics?: Topic[]; ordering?: 'none' | 'record' } = {},
): Promise<void> {
  const deletedAt = opts.deletedAt ?? null;
  // A deleted target has its secret erased (targets-store.ts deleteTarget), so the fixture does the same.
  const secret = deletedAt === null ? 'sealed-secret' : null;
  await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, previous_secret_sealed, previous_secret_expires_at, created_at, updated_at, deleted_at, ordering)
            values (${id}, ${id}, 'https://receiver.example/hook', ${JSON.stringify(opts.topics ?? ['record.created'])},
                    ${opts.enabled === false ? 0 : 1}, ${secret}, null, null, ${T0}, ${T0}, ${deletedAt}, ${opts.ordering ?? 'none'})`.execute(db);
}

export async function seedEvent(db: Kysely<Tables>, id = 'evt_1', payload: string | null = '{"title":"hello","n":1}'): Promise<void> {
  await sql`insert into events (id, topic, collection, record_id, payload, created_at)
            values (${id}, 'record.created', 'issues', 'rec_1', ${payload}, ${T0})`.execute(db);
}

export interface JobSeed {
  id: string;
  webhookId: string;
  eventId?: string;
  recordId?: string;
  state?: JobState;
  attemptCount?: number;
  roundStart?: number;
  nextAttemptAt?: number;
  lease?: { id: string; expiresAt: number } | null;
  lastError?: { code: string; message: string } | null;
  /** Takes part in its record's ordering (a job of a target that orders by record; migration 011). */
  ordered?: boolean;
}

/** Inserts one job and returns the row exactly as stored, for `{ ...before, changed: … }` expectations. */
export async function seedJob(db: Kysely<Tables>, s: JobSeed): Promise<DeliveryJobsTable> {
  const row: DeliveryJobsTable = {
    id: s.id,
    webhook_id: s.webhookId,
    event_id: s.eventId ?? 'evt_1',
    topic: 'record.created',
    collection: 'issues',
    record_id: s.recordId ?? 'rec_1',
    state: s.state ?? 'pending',
    attempt_count: s.attemptCount ?? 0,
    round_start: s.roundStart ?? 0,
    next_attempt_at: s.nextAttemptAt ?? T0,
    lease_id: s.lease?.id ?? null,
    lease_expires_at: s.lease?.expiresAt ?? null,
    last_error_code: s.lastError?.code ?? null,
    last_error_message: s.lastError?.message ?? null,
    created_at: T0,
    updated_at: T0,
    ordered: s.ordered ? 1 : 0,
  };
  await db.insertInto('delivery_jobs').values(row).execute();
  return row;
}

/**
 * A job row without the `success_*` columns (migration 020): they are the job's delivering attempt, which the view
 * `delivery_attempts` (allAttempts) shows as an attempt, as its own row did before.
 */
const jobOnly = (row: Record<string, unknown>): DeliveryJobsTable =>
  Object.fromEntries(Object.entries(row).filter(([column]) => !column.startsWith('success_'))) as unknown as DeliveryJobsTable;

export async function jobRow(db: Kysely<Tables>, id: string): Promise<DeliveryJobsTable | undefined> {
  const row = await db.selectFrom('delivery_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  return row && jobOnly(row);
}

export async function allJobs(db: Kysely<Tables>): Promise<DeliveryJobsTable[]> {
  return (await db.selectFrom('delivery_jobs').selectAll().orderBy('id').execute()).map(jobOnly);
}

export async function allAttempts(db: Kysely<Tables>): Promise<DeliveryAttemptsTable[]> {
  return db.selectFrom('delivery_attempts').selectAll().orderBy('job_id').orderBy('number').execute();
}

/** Both queue tables at once: "changes nothing" is checked as equality of this before and after. */
export async function snapshot(db: Kysely<Tables>): Promise<{ jobs: DeliveryJobsTable[]; attempts: DeliveryAttemptsTable[] }> {
  return { jobs: await allJobs(db), attempts: await allAttempts(db) };
}

export const okAttempt = (startedAt = NOW - 250): AttemptRecord => ({
  startedAt,
  durationMs: 120.4,
  statusCode: 200,
  error: null,
  responseSnippet: 'ok',
  trace: { remoteAddress: '203.0.113.7', timings: { dnsMs: 3, connectMs: 4, tlsMs: 9, firstByteMs: 100 } },
});

export const failedAttempt = (code = 'http_status', message = 'The receiver answered 500.') => ({
  startedAt: NOW - 250,
  durationMs: 80,
  statusCode: 500,
  error: { code, message },
  responseSnippet: 'boom',
  // A reused connection: no look-up, connect or handshake of its own.
  trace: { remoteAddress: '2001:db8::7', timings: { dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: 70 } },
});

/** The attempt row a failed/ok AttemptRecord becomes (duration rounded, as attempts-store.ts stores it). */
export const attemptRow = (jobId: string, number: number, a: AttemptRecord, webhookId = 'wh_a'): DeliveryAttemptsTable => ({
  job_id: jobId,
  webhook_id: webhookId,
  number,
  started_at: a.startedAt,
  duration_ms: Math.round(a.durationMs),
  status_code: a.statusCode,
  error_code: a.error?.code ?? null,
  error_message: a.error?.message ?? null,
  response_snippet: a.responseSnippet,
  remote_address: a.trace?.remoteAddress ?? null,
  dns_ms: a.trace?.timings.dnsMs ?? null,
  connect_ms: a.trace?.timings.connectMs ?? null,
  tls_ms: a.trace?.timings.tlsMs ?? null,
  first_byte_ms: a.trace?.timings.firstByteMs ?? null,
});

/** A fresh database with target wh_a and an event: where most transition tests start. */
export async function queueContext(dialect: Dialect): Promise<TestContext> {
  const t = await createTestContext(dialect);
  await seedTarget(t.ctx.database.db, 'wh_a');
  await seedEvent(t.ctx.database.db);
  return t;
}
