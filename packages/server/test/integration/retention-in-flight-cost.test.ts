import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import { pruneEvents } from '../../src/events/retention-store.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { statementWork } from '../helpers/plan-work.js';
import { StatementLog } from '../helpers/statement-log.js';

const T0 = Date.UTC(2026, 0, 1);
/** Old events whose jobs are in flight (retention keeps them), then old events no job needs (retention removes them). */
const IN_FLIGHT = 10_000;
const FREE = 500;

/**
 * Retention's guard, like replay's (replay-in-flight-cost.test.ts): on PostgreSQL the jobs in flight are in no index by
 * event (migration 021), so "no job needs this event" asks for them apart. As a correlated `not exists`, with the
 * statistics taken while the jobs were pending, the plan compared each old event with every job in flight: a walk over
 * 10,000 kept events beside 10,000 jobs in flight is then 10^8 rows compared. Its work must follow the events walked
 * plus the jobs in flight, not their product.
 */
describe.runIf(POSTGRES_URL)('event retention beside many jobs in flight (postgres)', () => {
  let t: TestContext;
  let db: Kysely<Tables>;

  beforeAll(async () => {
    t = await createTestContext('postgres');
    db = t.ctx.database.db;
    await sql`alter table delivery_jobs set (autovacuum_enabled = false)`.execute(db);
    await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
              values ('wh_a', 'a', 'https://example.com/', '["record.created"]', 1, 'x', ${T0}, ${T0})`.execute(db);
    await insertEvents(1, IN_FLIGHT + FREE);
    await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start,
                                         next_attempt_at, created_at, updated_at, ordered)
              select 'del_' || lpad(n::text, 8, '0'), 'wh_a', 'evt_' || lpad(n::text, 8, '0'), 'record.created', 'c', 'rec_' || n, 'pending', 0, 0,
                     ${T0}, ${T0}, ${T0}, 0
                from generate_series(1, ${IN_FLIGHT}) n`.execute(db);
    await sql`analyze`.execute(db);
    await sql`update delivery_jobs set state = 'delivering', lease_id = 'lease_x', lease_expires_at = ${T0 + 3_600_000}`.execute(db);
  });
  afterAll(async () => t?.close());

  const insertEvents = (from: number, through: number) =>
    sql`insert into events (id, topic, collection, record_id, payload, created_at)
        select 'evt_' || lpad(n::text, 8, '0'), 'record.created', 'c', 'rec_' || n, '{}', ${T0}::bigint + n
          from generate_series(${from}::int, ${through}::int) n`.execute(db);

  it('a pass walks the kept events and the jobs in flight once each, and removes only the events no job needs', async () => {
    const opts = { before: T0 + 10 * (IN_FLIGHT + FREE), idBelow: 'evt_99999999', limit: FREE };
    const log = new StatementLog();
    const { events } = await pruneEvents(db.withPlugin(log), t.ctx.database.caps, opts);
    expect(events).toBe(FREE);
    const left = await sql<{ n: string }>`select count(*) as n from events`.execute(db);
    expect(Number(left.rows[0]!.n)).toBe(IN_FLIGHT);

    // The pass's statements measured on the same rows: the removed events put back first.
    await insertEvents(IN_FLIGHT + 1, IN_FLIGHT + FREE);
    const executor = db.getExecutor();
    const statements = log.nodes.map((node, i) => executor.compileQuery(node, { queryId: `q${i}` } as never)).filter((q) => /delivery_jobs/.test(q.sql));
    expect(statements).toHaveLength(2);
    for (const q of statements) {
      const work = await statementWork(db, q);
      console.log(`${q.sql.trim().split(/\s+/).slice(0, 3).join(' ')}…: ${work} rows`);
      expect(work).toBeLessThan(4 * (IN_FLIGHT + FREE));
    }
  }, 120_000);
});
