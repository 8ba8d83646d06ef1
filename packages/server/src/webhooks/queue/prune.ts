import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { inTransaction } from './attempts-store.js';

export type FinishedState = 'delivered' | 'dead';

/**
 * delivered → [*] and dead → [*] (retention, SPEC §10): up to `limit` jobs that reached `state` before `before`
 * (`updated_at` is when they did: nothing changes a finished job but retryDead, which takes it out of `dead`), with
 * their attempts (their rows, and the success a delivered job holds on its own: counted as an attempt removed), in one
 * short transaction. The oldest first, through the partial indexes of migration 007. On
 * PostgreSQL the rows are locked as they are picked (skipping any a retry holds), so a job sent back to pending
 * meanwhile is never deleted, nor are its attempts.
 */
export async function prune(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { state: FinishedState; before: number; limit: number },
): Promise<{ jobs: number; attempts: number }> {
  const lock = caps.skipLocked();
  return inTransaction(db, async (trx) => {
    const { rows } = await sql<{ id: string }>`
      select id from delivery_jobs
       where state = ${sql.lit(opts.state)} and updated_at < ${opts.before}
       order by updated_at
       limit ${opts.limit}
       ${lock}`.execute(trx);
    if (rows.length === 0) return { jobs: 0, attempts: 0 };
    const ids = rows.map((r) => r.id);
    const attempts = await trx.deleteFrom('delivery_attempts_rows').where('job_id', 'in', ids).executeTakeFirst();
    // A delivered job's success goes with its row (migration 020): an attempt removed, as its row was before.
    const jobs = await trx
      .deleteFrom('delivery_jobs')
      .where('id', 'in', ids)
      .where('state', '=', sql.lit(opts.state))
      .returning(sql<number>`case when success_started_at is null then 0 else 1 end`.as('success'))
      .execute();
    return { jobs: jobs.length, attempts: Number(attempts.numDeletedRows) + jobs.reduce((n, j) => n + Number(j.success), 0) };
  });
}
