import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: a claim writes no entry into the three indexes that find a target's, a record's and an event's jobs
 * (`delivery_jobs_webhook`, `delivery_jobs_record`, `delivery_jobs_event_target`), which now hold every job except
 * those being delivered (`where state <> 'delivering'`).
 *
 * Each state change is a new version of the job row, and PostgreSQL adds an entry for it to every index whose
 * condition the new version meets (no HOT update: `state` is in the partial indexes' conditions). A claim
 * (pending → delivering) made a new entry in all three although no reader needs a job in flight there; a completion
 * (delivering → delivered) made them again. Measured on 20,000 due jobs of one target (issue 26): a claim of 256 jobs
 * took 11–12 ms, the update's own part 7.4 ms; with these indexes partial, 7–8 ms and ~3 ms.
 *
 * The jobs being delivered are few (what the workers hold at once), and every reader that must see them asks for
 * them apart: an arm with `state = 'delivering'` beside one with `state <> 'delivering'` (db/job-state-arms.ts: the
 * deliveries list, an event's jobs, replay, events' retention; kill-target-jobs.ts by state), which the partial index of leases (003) or a walk
 * of the in-flight jobs answers.
 *
 * SQLite is left as it is: it rewrites an index on an update only when a column of that index (or of its condition)
 * changes, so the full indexes already cost a claim nothing there, and a condition on `state` would add the work.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  for (const [name, columns] of INDEXES) {
    await sql`drop index ${sql.raw(name)}`.execute(db);
    await sql`create index ${sql.raw(name)} on delivery_jobs (${sql.raw(columns)}) where state <> 'delivering'`.execute(db);
  }
}

const INDEXES: ReadonlyArray<[string, string]> = [
  ['delivery_jobs_webhook', 'webhook_id, id'],
  ['delivery_jobs_record', 'record_id, id'],
  ['delivery_jobs_event_target', 'event_id, webhook_id'],
];

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
