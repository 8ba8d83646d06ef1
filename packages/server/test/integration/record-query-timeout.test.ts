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

  it.runIf(dialect === 'sqlite')('a query waiting for a busy reader thread is answered within the timeout, waiting included', async () => {
    // One reader thread; two queries that each run far longer than the timeout (50 ~ terms over 200 records of 50 KB
    // with capitals: 4.5-8 s on a two-core machine). The second waits for the thread the first holds: its wait counts, so it too is
    // answered 503 at the timeout, not after the first's timeout and then its own (about twice it, before).
    const timeoutMs = 2_000;
    t = await createTestApp(dialect, { SVC_QUERY_TIMEOUT_MS: String(timeoutMs), SVC_SQLITE_READERS: '1' });
    await t.collection('docs', [{ name: 'body', type: 'text' }]);
    const now = Date.now();
    // A non-ASCII capital every ~10 characters: every value takes svc_lower's slow path (each letter looked up).
    const body = Array.from({ length: 6_000 }, (_, i) => `w${i.toString(36)} É`).join(' ').slice(0, 50_000);
    await t.ctx.database.db
      .insertInto('records')
      .values(Array.from({ length: 200 }, (_, i) => ({ id: newId('rec', now + i), collection: 'docs', version: 1, created_at: now, updated_at: now, data: JSON.stringify({ body }) })))
      .execute();
    const token = await t.token(['records:read']);
    const filter = encodeURIComponent(Array.from({ length: 50 }, (_, i) => `body ~ 'absent-${i}'`).join(' || '));
    const timed = async () => {
      const started = performance.now();
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/docs/records?filter=${filter}&count=true`, headers: { authorization: `Bearer ${token}` } });
      return { status: res.statusCode, code: (res.json() as { code?: string }).code, ms: performance.now() - started };
    };
    // The second comes half a timeout later, so it is still waiting when the first is ended and gets the thread that
    // replaces it: with the wait not counted it then ran a whole timeout more, answered ~1.6 timeouts after it came.
    const first = timed();
    await new Promise((resolve) => setTimeout(resolve, timeoutMs / 2));
    const answers = [await timed(), await first];
    expect(answers.map((a) => [a.status, a.code])).toEqual([
      [503, 'query_timeout'],
      [503, 'query_timeout'],
    ]);
    // The main connection's 20 ms budget comes first; then the thread's wait and run share the timeout.
    for (const a of answers) expect(a.ms, JSON.stringify(answers)).toBeLessThan(timeoutMs * 1.4);
  }, 60_000);
});
