import { afterEach, describe, expect, it } from 'vitest';
import { insertRecords } from '../../src/records/records-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { timed } from '../helpers/loop-gaps.js';

/**
 * Building an index over a collection and deleting a collection with its records read or write every record. On
 * SQLite they run on a connection in a worker thread while the main connection's statements wait their turn
 * (Database.heavy), so the event loop turns throughout: before, 200,000 records of 5 KB held it 1.3 s for the index
 * and 1.4 s for the delete. Measured by the clock: the longest gap between timer ticks while the request ran, against
 * the request's own time.
 */
describe.each(DIALECTS)('heavy writes (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('an index build and a forced delete of 30,000 records of 4 KB leave the event loop turning, and writes wait for them', async () => {
    t = await createTestApp(dialect);
    const fields = (indexed: boolean) => [
      { name: 'title', type: 'text', required: true, indexed },
      { name: 'body', type: 'text', required: true },
    ];
    const created = await t.app.inject({ method: 'POST', url: '/admin/v1/collections', headers: t.admin.headers, payload: { name: 'big', fields: fields(false) } });
    expect(created.statusCode).toBe(201);
    const now = t.ctx.clock.now();
    const body = 'b'.repeat(4000);
    for (let n = 0; n < 30_000; n += 500) {
      await insertRecords(
        t.ctx.database.db,
        Array.from({ length: 500 }, (_, i) => ({ id: `rec_${String(n + i).padStart(26, '0')}`, collection: 'big', version: 1, data: { title: `t${(n + i) % 977}`, body }, createdAt: now, updatedAt: now })),
      );
    }
    const token = await t.token();

    // The index, with a record written while it is built: the write waits, then commits (no SQLITE_BUSY).
    const indexing = timed(() => t!.app.inject({ method: 'PATCH', url: '/admin/v1/collections/big', headers: t!.admin.headers, payload: { fields: fields(true) } }));
    const write = t.app.inject({ method: 'POST', url: '/api/v1/collections/big/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { title: 'during', body: 'x' } } });
    const indexed = await indexing;
    expect(indexed.result.statusCode).toBe(200);
    expect((await write).statusCode).toBe(201);
    // Used by a filter on the field, which finds the records written before and during the build.
    const found = await t.app.inject({ method: 'GET', url: `/api/v1/collections/big/records?filter=${encodeURIComponent("title = 't5' || title = 'during'")}&count=true&limit=1`, headers: { authorization: `Bearer ${token}` } });
    expect(found.statusCode).toBe(200);
    expect(found.json().totalCount).toBe(Math.ceil((30_000 - 5) / 977) + 1);

    const deleting = await timed(() => t!.app.inject({ method: 'DELETE', url: '/admin/v1/collections/big?force=true', headers: t!.admin.headers }));
    expect(deleting.result.statusCode).toBe(204);
    const reader = await t.token(['events:read']);
    const events = await t.app.inject({ method: 'GET', url: '/api/v1/events?limit=1000', headers: { authorization: `Bearer ${reader}` } });
    expect(events.statusCode, events.body).toBe(200);
    const deleted = (events.json().items as Array<{ topic: string; payload: { records: number } }>).filter((e) => e.topic === 'collection.deleted');
    expect(deleted.map((e) => e.payload.records)).toEqual([30_001]);
    expect(await t.ctx.database.db.selectFrom('records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).toEqual({ n: 0 });

    // Each took a while; the event loop never went longer than a fraction of that without a turn. On the main
    // connection (before) the longest gap was the statement's whole time.
    for (const { ms, longestGap } of [indexed, deleting]) {
      expect(longestGap).toBeLessThan(Math.max(100, ms / 3));
    }
    expect(t.violations).toEqual([]);
  }, 180_000);
});
