import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12: a records query svc cannot run within its limits is 503 `query_timeout`. On PostgreSQL, with every
 * connection of the queries' pool running a slow query, another filtered list waited for one until the pool's
 * checkout timeout and was answered 503 `unavailable`, the code of a database outage (300 slow filters over 200,000
 * records: 254 of them), while the database answered every other request. SQLite answers a wait for its busy reader
 * thread with query_timeout (record-query-timeout.test.ts); PostgreSQL now does too. A database that cannot be
 * reached is still `unavailable` (outages.test.ts).
 */
describe.runIf(POSTGRES_URL)('a records query waiting for a busy queries pool (postgres)', () => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('is 503 query_timeout, not unavailable, and the database still serves the rest', async () => {
    // SVC_REQUEST_TIMEOUT_MS 2000: a pool checkout gives up after 1 s (connect.ts outageTimeouts).
    t = await createTestApp('postgres', { SVC_REQUEST_TIMEOUT_MS: '2000', SVC_QUERY_TIMEOUT_MS: '10000' });
    await t.collection('docs', [{ name: 'body', type: 'text' }]);
    const token = await t.token(['records:read', 'records:write']);
    const auth = { authorization: `Bearer ${token}` };
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/collections/docs/records', headers: auth, payload: { data: { body: 'x' } } })).statusCode).toBe(201);

    // More sleepers than any pool size svc picks: every queries connection busy, the rest of them queued.
    const sleepers = Array.from({ length: 64 }, () => sql`select pg_sleep(4)`.execute(t.ctx.database.queries).then(
      () => 'slept',
      (err: Error) => err.message,
    ));
    try {
      // Every connection of the queries' pool is running its sleep (read through the main pool; runtime.ts sizes it).
      const poolSize = Math.max(10, t.ctx.config.webhookConcurrency / 4);
      await waitFor(
        async () => {
          const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where query = 'select pg_sleep(4)' and state = 'active'`.execute(t.ctx.database.db);
          return rows[0]!.n >= poolSize;
        },
        'the queries pool busy',
        10_000,
      );
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/docs/records?filter=${encodeURIComponent("body ~ 'x'")}`, headers: auth });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ code: 'query_timeout', status: 503 });
      // The database itself answers: a plain page and a read by id run on the main pool.
      const plain = await t.app.inject({ method: 'GET', url: '/api/v1/collections/docs/records', headers: auth });
      expect(plain.statusCode, plain.body).toBe(200);
    } finally {
      await Promise.all(sleepers);
    }
  }, 60_000);

});
