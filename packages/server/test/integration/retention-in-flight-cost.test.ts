import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import { pruneEvents } from '../../src/events/retention-store.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { insertEvents, jobsInFlightUnseen, statementWork } from '../helpers/plan-work.js';
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
    await jobsInFlightUnseen(db, { webhookId: 'wh_a', events: IN_FLIGHT + FREE, inFlight: IN_FLIGHT, at: T0 });
  });
  afterAll(async () => t?.close());


  it('a pass walks the kept events and the jobs in flight once each, and removes only the events no job needs', async () => {
    const opts = { before: T0 + 10 * (IN_FLIGHT + FREE), idBelow: 'evt_99999999', limit: FREE };
    const log = new StatementLog();
    const { events } = await pruneEvents(db.withPlugin(log), t.ctx.database.caps, opts);
    expect(events).toBe(FREE);
    const left = await sql<{ n: string }>`select count(*) as n from events`.execute(db);
    expect(Number(left.rows[0]!.n)).toBe(IN_FLIGHT);

    // The pass's statements measured on the same rows: the removed events put back first.
    await insertEvents(db, { from: IN_FLIGHT + 1, through: IN_FLIGHT + FREE, at: T0 });
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
