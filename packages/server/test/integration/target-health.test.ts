import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import { ManualClock } from '../../src/lib/clock.js';
import { nearestRank } from '../../src/webhooks/target-health.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { seedEvent, seedJob } from '../helpers/queue-fixtures.js';

const NOW = Date.UTC(2026, 10, 20, 10, 30);
const MIN = 60_000;
const HOUR = 60 * MIN;
const publicResolver = async () => [{ address: '93.184.216.34', family: 4 as const }];

/** Attempts at known times, written as the transitions write them (webhook_id beside job_id). */
async function seedAttempts(db: Kysely<Tables>, webhookId: string, attempts: Array<{ at: number; ms: number; ok: boolean }>): Promise<void> {
  const jobId = `del_${webhookId.slice(3)}`;
  await seedJob(db, { id: jobId, webhookId });
  let number = 0;
  for (const a of attempts) {
    number++;
    await sql`insert into delivery_attempts (job_id, webhook_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet)
              values (${jobId}, ${webhookId}, ${number}, ${a.at}, ${a.ms}, ${a.ok ? 200 : 500}, ${a.ok ? null : 'http_status'}, ${a.ok ? null : 'The receiver answered 500.'}, '')`.execute(db);
  }
}

describe('nearest-rank percentiles', () => {
  it('picks the smallest value with at least p of the values at or below it', () => {
    expect(nearestRank(0.5, 4)).toBe(2);
    expect(nearestRank(0.95, 4)).toBe(4);
    expect(nearestRank(0.95, 100)).toBe(95);
    expect(nearestRank(0.5, 1)).toBe(1);
  });
});

describe.each(DIALECTS)('GET /admin/v1/webhooks/{id}/stats (%s)', (dialect) => {
  let t: TestApp;
  let target: string;
  let other: string;
  beforeEach(async () => {
    t = await createTestApp(dialect, {}, { clock: new ManualClock(NOW), resolver: publicResolver });
    const create = async (name: string) =>
      (await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name, url: 'https://receiver.example/hook', topics: ['record.created'] } })).json().id as string;
    target = await create('a');
    other = await create('b');
    await seedEvent(t.ctx.database.db);
  });
  afterEach(async () => t.close());

  const stats = (id: string, query = '') => t.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${id}/stats${query}`, headers: t.admin.headers });

  it('counts the window’s attempts, hourly and in total, with nearest-rank latencies and the last success and failure', async () => {
    const db = t.ctx.database.db;
    await seedAttempts(db, target, [
      { at: NOW - 25 * HOUR, ms: 9_000, ok: true }, // before the default window
      { at: NOW - 3 * HOUR + 5 * MIN, ms: 100, ok: true },
      { at: NOW - 3 * HOUR + 10 * MIN, ms: 300, ok: false },
      { at: NOW - HOUR, ms: 200, ok: true },
      { at: NOW - 10 * MIN, ms: 50, ok: true },
    ]);
    await seedAttempts(db, other, [{ at: NOW - 5 * MIN, ms: 7, ok: false }]);
    const res = await stats(target);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      attempts: { total: 4, succeeded: 3, failed: 1 },
      successRate: 0.75,
      latencyMs: { p50: 100, p95: 300 },
      lastSuccessAt: '2026-11-20T10:20:00.000Z',
      lastFailureAt: '2026-11-20T07:40:00.000Z',
    });
    expect(body.buckets).toHaveLength(25);
    expect(body.buckets[0]).toEqual({ start: '2026-11-19T10:00:00.000Z', succeeded: 0, failed: 0 });
    const nonEmpty = body.buckets.filter((b: { succeeded: number; failed: number }) => b.succeeded + b.failed > 0);
    expect(nonEmpty).toEqual([
      { start: '2026-11-20T07:00:00.000Z', succeeded: 1, failed: 1 },
      { start: '2026-11-20T09:00:00.000Z', succeeded: 1, failed: 0 },
      { start: '2026-11-20T10:00:00.000Z', succeeded: 1, failed: 0 },
    ]);
    expect(body.buckets.at(-1).start).toBe('2026-11-20T10:00:00.000Z');

    const wider = (await stats(target, `?since=${new Date(NOW - 26 * HOUR).toISOString()}`)).json();
    expect(wider).toMatchObject({ attempts: { total: 5, succeeded: 4, failed: 1 }, latencyMs: { p50: 200, p95: 9_000 } });
    expect(wider.buckets[0]).toEqual({ start: '2026-11-19T08:00:00.000Z', succeeded: 0, failed: 0 });
    expect(wider.buckets[1]).toEqual({ start: '2026-11-19T09:00:00.000Z', succeeded: 1, failed: 0 });

    const lastHour = (await stats(target, `?since=${encodeURIComponent(new Date(NOW - 30 * MIN).toISOString())}`)).json();
    expect(lastHour).toEqual({
      attempts: { total: 1, succeeded: 1, failed: 0 },
      successRate: 1,
      latencyMs: { p50: 50, p95: 50 },
      lastSuccessAt: '2026-11-20T10:20:00.000Z',
      lastFailureAt: null,
      buckets: [{ start: '2026-11-20T10:00:00.000Z', succeeded: 1, failed: 0 }],
    });
  });

  it('with no attempts: rate, latencies and times null, every bucket zero', async () => {
    const body = (await stats(target)).json();
    expect(body).toMatchObject({ attempts: { total: 0, succeeded: 0, failed: 0 }, successRate: null, latencyMs: { p50: null, p95: null }, lastSuccessAt: null, lastFailureAt: null });
    expect(body.buckets).toHaveLength(25);
    expect(body.buckets.every((b: { succeeded: number; failed: number }) => b.succeeded === 0 && b.failed === 0)).toBe(true);
  });

  it('since more than 7 days back, in the future or not a time is invalid_query; an unknown target is 404', async () => {
    for (const since of [new Date(NOW - 7 * 24 * HOUR - MIN).toISOString(), new Date(NOW + HOUR).toISOString(), 'yesterday']) {
      const res = await stats(target, `?since=${encodeURIComponent(since)}`);
      expect(res.statusCode, since).toBe(400);
      expect(res.json().code).toBe('invalid_query');
      expect(res.headers['x-request-id']).toBeTruthy();
    }
    expect((await stats(target, `?since=${encodeURIComponent(new Date(NOW - 7 * 24 * HOUR).toISOString())}`)).statusCode).toBe(200);
    expect((await stats('wh_00000000000000000000000000')).statusCode).toBe(404);
  });
});
