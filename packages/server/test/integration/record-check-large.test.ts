import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { insertRecords } from '../../src/records/records-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * SQLite: a records query first runs on the main connection with a budget of 20 ms, checked by a call into
 * JavaScript every 64 rows (QueryDialect.rowCheck). A page over fewer than 64 records of 1 MB never reached a check:
 * sorting 63 of them by a field held the event loop ~500 ms and never moved to a reader thread. The page's check now
 * also calls before every large record (recordCheck), so it gives up on the main connection and goes to a reader,
 * where a query timeout of 1 ms stops it. Before, it answered 200 from the main connection.
 */
describe('a records page over a few large records (sqlite)', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('leaves the main connection at its budget and stops at SVC_QUERY_TIMEOUT_MS', async () => {
    t = await createTestApp('sqlite', { SVC_QUERY_TIMEOUT_MS: '1' });
    await t.collection('huge', [{ name: 'title', type: 'text', required: true }, { name: 'body', type: 'text' }]);
    const now = t.ctx.clock.now();
    // 40 records of ~1 MB whose rowids miss every 64th: no row check would be reached without the size condition.
    const body = 'b'.repeat(1_000_000);
    for (let i = 0; i < 40; i += 5) {
      await insertRecords(
        t.ctx.database.db,
        Array.from({ length: 5 }, (_, k) => ({ id: `rec_${String(i + k).padStart(26, '0')}`, collection: 'huge', version: 1, data: { title: `t${i + k}`, body: `${i + k}${body}` }, createdAt: now, updatedAt: now })),
      );
    }
    const { rows } = await sql<{ low: number; high: number }>`select min(rowid) as low, max(rowid) as high from records where collection = 'huge'`.execute(t.ctx.database.db);
    expect(Math.floor(rows[0]!.low / 64)).toBe(Math.floor(rows[0]!.high / 64));
    expect(rows[0]!.high % 64).not.toBe(0);
    const token = await t.token();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/collections/huge/records?sort=-body&limit=5&fields=title', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'query_timeout' });
    expect(t.violations).toEqual([]);
  }, 60_000);
});
