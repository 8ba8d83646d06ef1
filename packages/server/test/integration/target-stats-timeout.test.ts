import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { timed } from '../helpers/loop-gaps.js';

/**
 * A target's stats read every attempt of their window, and sort them for each percentile: a busy target's week is
 * millions of rows. They run where records queries run (SQLite: a reader thread, not the main one; both databases:
 * SVC_QUERY_TIMEOUT_MS), so a window too large for the timeout is a 503 `query_timeout`, not a stalled process.
 */
/** A target with `attempts` failed attempts within the last day, as a busy failing target makes them; its id. */
async function busyTarget(t: TestApp, attempts: number): Promise<string> {
  await t.collection('issues', [{ name: 'title', type: 'text', required: true }]);
  const created = await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'busy', url: 'https://127.0.0.1:9/hook', topics: ['record.created'] } });
  expect(created.statusCode).toBe(201);
  const webhookId = created.json().id as string;
  const token = await t.token();
  const record = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { title: 'x' } } });
  expect(record.statusCode).toBe(201);
  const { db } = t.ctx.database;
  const job = await db.selectFrom('delivery_jobs').select('id').where('webhook_id', '=', webhookId as never).executeTakeFirstOrThrow();
  const now = t.ctx.clock.now();
  for (let n = 1; n <= attempts; n += 1000) {
    await db
      .insertInto('delivery_attempts_rows')
      .values(Array.from({ length: 1000 }, (_, i) => ({
        job_id: job.id, number: n + i, started_at: now - 1000 - (n + i), duration_ms: (n + i) % 997, status_code: 503, error_code: 'http_status',
        error_message: 'HTTP 503', response_snippet: '', webhook_id: webhookId, remote_address: '127.0.0.1', dns_ms: null, connect_ms: 1, tls_ms: 2, first_byte_ms: 3,
      })))
      .execute();
  }
  return webhookId;
}

describe.each(DIALECTS)('a target\'s stats (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('stop at SVC_QUERY_TIMEOUT_MS with 503 query_timeout', async () => {
    t = await createTestApp(dialect, { SVC_QUERY_TIMEOUT_MS: '1', SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' });
    // 150,000 failed attempts: on SQLite well past the main connection's budget (20 ms), so the statements go to a
    // reader thread, where the 1 ms timeout stops them.
    const webhookId = await busyTarget(t, 150_000);
    const stats = await t.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${webhookId}/stats`, headers: t.admin.headers });
    expect(stats.statusCode).toBe(503);
    expect(stats.json()).toMatchObject({ code: 'query_timeout', status: 503 });
    expect(stats.headers['x-request-id']).toBeTruthy();
    expect(t.violations).toEqual([]);
  }, 60_000);

  /*
   * SPEC §12: a busy target's stats asked for by many at once (the health page asks six at a time, several admins may
   * have it open) never hold the event loop. On SQLite each statement first tries the main connection until its budget
   * (20 ms) is spent: the tries of requests that arrived together ran back to back, and ten requests for the stats of a
   * target with a day of 31,000 attempts held /healthz 530-640 ms (a database of 2,000,000 attempts, 1,000 targets).
   * Here, twenty over 60,000 attempts: the loop's longest gap was 578-799 ms before one try a turn, 59-145 ms after on
   * a quiet machine. The bound is 400 ms, not the SPEC's 250: this test's loop is the suite's too, beside other files.
   */
  const ATTEMPTS = 60_000;
  const TOGETHER = 20;
  it(`${TOGETHER} at once answer while the event loop never waits 400 ms`, async () => {
    t = await createTestApp(dialect, { SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' });
    const webhookId = await busyTarget(t, ATTEMPTS);

    const { result, ms, longestGap } = await timed(() =>
      Promise.all(Array.from({ length: TOGETHER }, () => t!.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${webhookId}/stats`, headers: t!.admin.headers }))),
    );
    console.log(`${dialect}: ${TOGETHER} stats over ${ATTEMPTS} attempts in ${Math.round(ms)} ms; longest loop gap ${Math.round(longestGap)} ms`);
    for (const res of result) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().attempts).toEqual({ total: ATTEMPTS, succeeded: 0, failed: ATTEMPTS });
    }
    expect(longestGap).toBeLessThan(400);
    expect(t.violations).toEqual([]);
  }, 120_000);
});
