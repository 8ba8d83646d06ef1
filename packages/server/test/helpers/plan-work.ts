import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Tables } from '../../src/db/tables.js';

/** Rows a PostgreSQL plan's nodes produced, read or threw away, over all their loops: the statement's work. */
export function rowsTouched(node: Record<string, unknown>): number {
  const loops = Number(node['Actual Loops'] ?? 1);
  const own = (Number(node['Actual Rows'] ?? 0) + Number(node['Rows Removed by Filter'] ?? 0) + Number(node['Rows Removed by Join Filter'] ?? 0)) * loops;
  const children = (node['Plans'] as Array<Record<string, unknown>> | undefined) ?? [];
  return own + children.reduce((sum, child) => sum + rowsTouched(child), 0);
}

/** The rows a statement touches when run (EXPLAIN ANALYZE, PostgreSQL), in a transaction rolled back after. */
export async function statementWork(db: Kysely<Tables>, q: CompiledQuery): Promise<number> {
  return db.connection().execute(async (c) => {
    await sql`begin`.execute(c);
    try {
      const { rows } = await c.executeQuery(CompiledQuery.raw<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(`explain (analyze, format json) ${q.sql}`, [...q.parameters]));
      return rowsTouched(rows[0]!['QUERY PLAN'][0]!.Plan);
    } finally {
      await sql`rollback`.execute(c);
    }
  });
}

/**
 * Target `webhookId`, events `evt_00000001` … of `events`, and a job in flight for each of the first `inFlight` of
 * them, with PostgreSQL's statistics stale as a worker's burst leaves them: taken while the jobs were pending (and
 * autovacuum kept from taking them again), so the planner expects none in flight.
 */
export async function jobsInFlightUnseen(db: Kysely<Tables>, opts: { webhookId: string; events: number; inFlight: number; at: number }): Promise<void> {
  const { webhookId, at } = opts;
  await sql`alter table delivery_jobs set (autovacuum_enabled = false)`.execute(db);
  await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
            values (${webhookId}, 'a', 'https://example.com/', '["record.created"]', 1, 'x', ${at}, ${at})`.execute(db);
  await insertEvents(db, { from: 1, through: opts.events, at });
  await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start,
                                       next_attempt_at, created_at, updated_at, ordered)
            select 'del_' || lpad(n::text, 8, '0'), ${webhookId}, 'evt_' || lpad(n::text, 8, '0'), 'record.created', 'c', 'rec_' || n, 'pending', 0, 0,
                   ${at}, ${at}, ${at}, 0
              from generate_series(1, ${opts.inFlight}) n`.execute(db);
  await sql`analyze`.execute(db);
  await sql`update delivery_jobs set state = 'delivering', lease_id = 'lease_x', lease_expires_at = ${at + 3_600_000}`.execute(db);
}

/** Events `evt_<from>` … `evt_<through>` (8 digits), one a millisecond from `at`. */
export const insertEvents = (db: Kysely<Tables>, opts: { from: number; through: number; at: number }) =>
  sql`insert into events (id, topic, collection, record_id, payload, created_at)
      select 'evt_' || lpad(n::text, 8, '0'), 'record.created', 'c', 'rec_' || n, '{}', ${opts.at}::bigint + n
        from generate_series(${opts.from}::int, ${opts.through}::int) n`.execute(db);
