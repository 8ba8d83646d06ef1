import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';

/**
 * held → pending: the oldest held job of each (target, record) whose unfinished job has finished (delivered or
 * dead), due at once. With `after`, only the records of those just-finished jobs (the transition that finished them
 * calls this); without, every record (the worker's periodic sweep, for a release a crash left unmade). The guard —
 * no pending or delivering job of the record — makes a call that comes too early or twice change nothing. Only jobs
 * marked `ordered` can hold a record's place (migration 011): a held job's target orders by record, and all its
 * unfinished record jobs are marked.
 */
export async function promoteHeld(db: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; after?: readonly string[] }): Promise<number> {
  const { now, after } = opts;
  if (after !== undefined && after.length === 0) return 0;
  // With a list, driven by the finished jobs (one probe of delivery_jobs_held each), so its cost follows the batch,
  // not how many jobs are held; the sweep walks every held job.
  const heads =
    after === undefined
      ? sql`select min(h.id) from delivery_jobs h where h.state = 'held' group by h.webhook_id, h.record_id`
      : sql`select (select min(h.id) from delivery_jobs h where h.state = 'held' and h.webhook_id = f.webhook_id and h.record_id = f.record_id)
              from delivery_jobs f where f.id in (select finished.id from (${caps.rowsOf([['id', 'text']], after.map((id) => [id]))}) as finished)`;
  const res = await sql`
    update delivery_jobs set state = 'pending', next_attempt_at = ${now}, updated_at = ${now}
     where state = 'held'
       and id in (${heads})
       and not exists (select 1 from delivery_jobs o
                        where o.webhook_id = delivery_jobs.webhook_id and o.record_id = delivery_jobs.record_id
                          and o.ordered = 1 and o.state in ('pending', 'delivering'))`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
