import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { sql } from 'kysely';
import { newId } from '../../src/lib/ids.js';
import { pruneExpired, refreshStatistics } from '../../src/maintenance.js';
import { fieldIndexName } from '../../src/records/query/field-index-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

describe.each(DIALECTS)('maintenance (%s)', (dialect) => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('prunes expired sessions and idempotency keys past 24 hours, and keeps live ones', async () => {
    const clock = new ManualClock(Date.now());
    t = await createTestApp(dialect, {}, { clock });
    await t.collection('issues', [{ name: 'title', type: 'text' }]);
    const auth = { authorization: `Bearer ${await t.token()}` };
    await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { ...auth, 'idempotency-key': 'a' }, payload: { data: { title: 'x' } } });
    const count = async (table: 'sessions' | 'idempotency_keys') => (await t.ctx.database.db.selectFrom(table).selectAll().execute()).length;
    expect(await count('sessions')).toBe(1);
    expect(await count('idempotency_keys')).toBe(1);
    await pruneExpired(t.ctx);
    expect(await count('sessions')).toBe(1);
    expect(await count('idempotency_keys')).toBe(1);
    clock.advance(25 * 3_600_000);
    await pruneExpired(t.ctx);
    expect(await count('sessions')).toBe(0);
    expect(await count('idempotency_keys')).toBe(0);
    // After expiry the key is free again: a new request makes a new record.
    const again = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { ...auth, 'idempotency-key': 'a' }, payload: { data: { title: 'y' } } });
    expect(again.statusCode).toBe(201);
  });

  it.runIf(dialect === 'sqlite')('brings the statistics of a collection that grew since its index was built up to date', async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', [{ name: 'status', type: 'text', indexed: true }]);
    const stat = async () =>
      (await sql<{ stat: string }>`select stat from sqlite_stat1 where idx = ${fieldIndexName('issues', 'status')}`.execute(t.ctx.database.db)).rows[0]?.stat;
    const before = await stat();
    const now = Date.now();
    const rows = Array.from({ length: 3000 }, (_, i) => ({ id: newId('rec', now), collection: 'issues', version: 1, data: JSON.stringify({ status: `s${i % 3}` }), created_at: now, updated_at: now }));
    for (let i = 0; i < rows.length; i += 500) await t.ctx.database.db.insertInto('records').values(rows.slice(i, i + 500)).execute();
    expect(await stat()).toBe(before);
    await refreshStatistics(t.ctx);
    // sqlite_stat1: "<rows in the index> <rows per distinct status> <rows per (status, id)>".
    const [count, perStatus] = (await stat())!.split(' ').map(Number);
    expect(count).toBeGreaterThanOrEqual(1000);
    expect(perStatus).toBeGreaterThanOrEqual(300);
  });
});
