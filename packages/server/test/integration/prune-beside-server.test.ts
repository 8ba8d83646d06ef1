import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connect.js';
import type { Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { idFloor } from '../../src/lib/ids.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { svc } from '../helpers/svc-command.js';

const EVENTS = 100_000;
const JOBS = 40_000;
const RETENTION = { SVC_RETENTION_DELIVERED_DAYS: '0.0001', SVC_RETENTION_DEAD_DAYS: '0.0001', SVC_RETENTION_EVENTS_DAYS: '0.0001' };

/**
 * SPEC §12: `svc prune` beside a running server on SQLite. The server's writer that finds the lock taken waits in
 * SQLite's busy handler, on its event loop, trying only between sleeps of up to 100 ms: prune's transactions back to
 * back (microseconds free between two) kept it waiting 0.5-1.2 s, and /healthz with it. SQLite only: on PostgreSQL a
 * waiting writer waits off the event loop and is woken as the lock is released.
 */
describe('svc prune beside a server (sqlite)', () => {
  let file: TestDatabase | undefined;
  let server: Database | undefined;
  afterEach(async () => {
    await server?.close();
    await file?.drop();
    server = file = undefined;
  });

  it('leaves the write lock free between its transactions for as long as a waiting writer needs', async () => {
    file = await createTestDatabase('sqlite');
    // The server's connection as `svc serve` opens it: busy_timeout, transactions begun immediate.
    server = await connect(file.url, { sqliteSynchronous: 'NORMAL', poolSize: 1 });
    await migrateToLatest(server);
    await seed(server, Date.now() - 3_600_000);
    await sql`create table probe_writes (n integer)`.execute(server.db);

    let pruned = false;
    const pass = svc(['prune'], { SVC_DATABASE_URL: file.url, SVC_SECRET_KEY: 'a'.repeat(64), SVC_LOG_LEVEL: 'warn', ...RETENTION }).finally(() => (pruned = true));
    let writes = 0;
    let longestMs = 0;
    while (!pruned) {
      const started = performance.now();
      await server.db.transaction().execute((trx) => sql`insert into probe_writes (n) values (${writes})`.execute(trx));
      longestMs = Math.max(longestMs, performance.now() - started);
      writes++;
      // A server's writes come and go (the probe's client: one every 100 ms); back to back, they would keep prune out.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const result = await pass;
    console.log(`sqlite: ${writes} writes beside svc prune, the longest ${longestMs.toFixed(1)} ms`);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`delivery_jobs: ${JOBS} removed\ndelivery_attempts: ${2 * JOBS + JOBS / 2} removed\nevents: ${EVENTS - 1} removed\n`);
    // Before: 1,134-1,258 ms (a write waited until a try of its busy handler fell in one of the microsecond gaps
    // between prune's transactions, or prune ended). Now at most one transaction of prune (5-25 ms, up to 70 with a
    // slow commit) and one sleep of the busy handler after it: 97-103 ms alone, 112-254 ms beside the other retention
    // suites on two cores (a transaction stretched while its process waited for a core). The bound is the
    // regression's, with room for such load, as in retention-big-events.test.ts.
    expect(longestMs).toBeLessThan(500);
  }, 120_000);
});

/**
 * Old rows, all prunable: EVENTS events, JOBS jobs (half delivered, half dead, each of an event, with two failed
 * attempts; a delivered job's success counts as a third). The newest event stays (SQLite numbers the next from it).
 */
async function seed(database: Database, old: number): Promise<void> {
  const { db } = database;
  await db.transaction().execute(async (trx) => {
    await sql`insert into webhooks (id, name, url, topics, enabled, created_at, updated_at)
      values ('wh_seed', 'w', 'https://example.com/h', '["*"]', 1, ${old}, ${old})`.execute(trx);
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${EVENTS})
      insert into events (id, topic, collection, record_id, created_at, payload, tx, position)
      select ${idFloor('evt', old)} || printf('%016d', i), 'record.created', 'c', 'rec_x', ${old} + i, '{"title":"x"}', 0, i from n`.execute(trx);
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${JOBS})
      insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start,
        next_attempt_at, created_at, updated_at, success_started_at)
      select 'del_' || printf('%016d', i), 'wh_seed', ${idFloor('evt', old)} || printf('%016d', i), 'record.created', 'c', 'rec_x',
        case i % 2 when 0 then 'delivered' else 'dead' end, 2, 0, 0, ${old}, ${old} + i, case i % 2 when 0 then ${old} end from n`.execute(trx);
    await sql`insert into delivery_attempts_rows (job_id, number, started_at, duration_ms, status_code, response_snippet, webhook_id)
      select id, a.number, ${old}, 12, 500, 'no', 'wh_seed' from delivery_jobs, (select 1 as number union all select 2) as a`.execute(trx);
  });
}
