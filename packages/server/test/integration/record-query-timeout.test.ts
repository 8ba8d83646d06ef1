import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

// Every file registers its tests on every dialect, so a run without PostgreSQL still has something to count (a file
// with no test is a failure). PostgreSQL cancels the statement; SQLite abandons it and ends its reader thread.
describe.each(DIALECTS)('records query timeout (%s)', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('cancels a records query running longer than SVC_QUERY_TIMEOUT_MS: 503 query_timeout', async () => {
    t = await createTestApp(dialect, { SVC_QUERY_TIMEOUT_MS: '1' });
    await t.collection('logs', [{ name: 'at', type: 'datetime' }, { name: 'line', type: 'text' }]);
    const now = Date.now();
    for (let start = 0; start < 20_000; start += 1000) {
      const rows = Array.from({ length: 1000 }, (_, k) => ({
        id: newId('rec', now + start + k), collection: 'logs', version: 1, created_at: now, updated_at: now,
        data: JSON.stringify({ at: new Date(now - (start + k) * 1000).toISOString(), line: `line ${start + k} ${'y'.repeat(300)}` }),
      }));
      await t.ctx.database.db.insertInto('records').values(rows).execute();
    }
    const token = await t.token();
    const filter = encodeURIComponent('at > "2000-01-01T00:00:00Z" && line ~ "LINE 1"');
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/logs/records?filter=${filter}&sort=-at&count=true`, headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'query_timeout', status: 503 });
    expect(res.headers['x-request-id']).toBeTruthy();
    // Writes are not subject to it.
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/collections/logs/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { line: 'x' } } });
    expect(created.statusCode).toBe(201);
  }, 60_000);
});
