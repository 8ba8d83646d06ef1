import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from '../../db/tables.js';
import { attemptValues, inTransaction } from './attempts-store.js';
import type { AttemptRecord, HeldRef } from './job.js';
import type { DeliveryId, WebhookId } from '../../lib/ids.js';

export interface Retry {
  job: HeldRef;
  attempt: AttemptRecord & { error: { code: string; message: string } };
  /** When the job is due again (the decision's). */
  at: number;
}

/** delivering → pending at `at` (the decision's), with the failed attempt. False when the lease was lost. */
export async function scheduleRetry(db: Kysely<Tables>, opts: { now: number } & Retry): Promise<boolean> {
  return (await scheduleRetries(db, { now: opts.now, retries: [opts] })).has(opts.job.id);
}

/**
 * Retries a statement writes: up to 256, padded with rows of nulls (which match no job) to one of these counts, so
 * that few statement texts exist for the statement caches (as the SQLite driver's claims and completions).
 */
const SIZES = [1, 4, 16, 64, 256];
const MAX = SIZES[SIZES.length - 1]!;

/**
 * delivering → pending for each of `retries` still under the lease it names, each with its failed attempt row, in two
 * statements for up to 256 of them: one update that finds the jobs by a table of values, one insert of the attempts of
 * the jobs it updated. The ids it applied to; a job whose lease was lost is left alone and keeps no attempt. Written one
 * job at a time (an update and an insert each), a completer recording a failing receiver's attempts on PostgreSQL
 * made two round trips a failure: 10,000 fast failures were written at 839–956 a second, against 2,700–2,800 on SQLite.
 */
export async function scheduleRetries(db: Kysely<Tables>, opts: { now: number; retries: readonly Retry[] }): Promise<Set<DeliveryId>> {
  const applied = new Set<DeliveryId>();
  if (opts.retries.length === 0) return applied;
  await inTransaction(db, async (trx) => {
    for (let start = 0; start < opts.retries.length; start += MAX) {
      const chunk = opts.retries.slice(start, start + MAX);
      const size = SIZES.find((s) => s >= chunk.length) ?? MAX;
      const padded = <T>(rows: T[], pad: () => T): T[] => [...rows, ...Array.from({ length: size - rows.length }, pad)];
      const jobs = padded(
        chunk.map((r) => sql`(cast(${r.job.id} as text), cast(${r.job.lease} as text), cast(${r.at} as bigint), cast(${r.attempt.error.code} as text), cast(${r.attempt.error.message} as text))`),
        () => sql`(cast(null as text), cast(null as text), cast(null as bigint), cast(null as text), cast(null as text))`,
      );
      const { rows } = await sql<{ id: string; webhook_id: string; attempt_count: number }>`
        update delivery_jobs
           set state = 'pending', attempt_count = attempt_count + 1, next_attempt_at = a.at, lease_id = null, lease_expires_at = null,
               last_error_code = a.code, last_error_message = a.message, updated_at = ${opts.now}
          from (select column1 as id, column2 as lease, column3 as at, column4 as code, column5 as message from (values ${sql.join(jobs)}) v) a
         where delivery_jobs.id = a.id and delivery_jobs.state = 'delivering' and delivery_jobs.lease_id = a.lease
        returning delivery_jobs.id, delivery_jobs.webhook_id, delivery_jobs.attempt_count`.execute(trx);
      if (rows.length === 0) continue;
      const byId = new Map(chunk.map((r) => [r.job.id as string, r]));
      const attempts = rows.map((row) => {
        applied.add(row.id as DeliveryId);
        return attemptValues(row.id, row.webhook_id as WebhookId, Number(row.attempt_count), byId.get(row.id)!.attempt);
      });
      await insertAttemptRows(trx, attempts, size);
    }
  });
  return applied;
}

const ATTEMPT_COLUMNS = [
  ['job_id', 'text'],
  ['webhook_id', 'text'],
  ['number', 'integer'],
  ['started_at', 'bigint'],
  ['duration_ms', 'integer'],
  ['status_code', 'integer'],
  ['error_code', 'text'],
  ['error_message', 'text'],
  ['response_snippet', 'text'],
  ['remote_address', 'text'],
  ['dns_ms', 'integer'],
  ['connect_ms', 'integer'],
  ['tls_ms', 'integer'],
  ['first_byte_ms', 'integer'],
] as const;

/** The attempt rows in one insert, padded to `size` rows of nulls that the insert leaves out. */
async function insertAttemptRows(trx: Kysely<Tables>, attempts: ReadonlyArray<ReturnType<typeof attemptValues>>, size: number): Promise<void> {
  const typed = (value: unknown, type: string): RawBuilder<unknown> => sql`cast(${value} as ${sql.raw(type)})`;
  const rows = attempts.map((a) => sql`(${sql.join(ATTEMPT_COLUMNS.map(([column, type]) => typed(a[column], type)))})`);
  const nulls = sql`(${sql.join(ATTEMPT_COLUMNS.map(([, type]) => typed(null, type)))})`;
  while (rows.length < size) rows.push(nulls);
  const names = sql.raw(ATTEMPT_COLUMNS.map(([column]) => column).join(', '));
  const selected = sql.raw(ATTEMPT_COLUMNS.map(([column], i) => `column${i + 1} as ${column}`).join(', '));
  await sql`insert into delivery_attempts_rows (${names})
            select ${names} from (select ${selected} from (values ${sql.join(rows)}) v) a
             where job_id is not null`.execute(trx);
}
