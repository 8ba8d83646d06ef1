import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { pruneExpired } from '../../src/maintenance.js';
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
});
