import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import { ManualClock } from '../../src/lib/clock.js';
import { complete } from '../../src/webhooks/queue/complete.js';
import { markDead } from '../../src/webhooks/queue/mark-dead.js';
import { scheduleRetry } from '../../src/webhooks/queue/schedule-retry.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { seedEvent, seedJob } from '../helpers/queue-fixtures.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Migration 020: a delivered job keeps its delivering attempt on its own row (the completion's one statement) instead
 * of an attempt row. Seen from outside nothing changed: the attempts API, the numbering and the target's statistics
 * answer what they answered when every attempt was a row, which is what an older process still writes. Each test
 * compares the two layouts on the same data.
 */

const rowsOf = async (db: Kysely<Tables>, jobId: string) =>
  db.selectFrom('delivery_attempts_rows').select(['number', 'status_code', 'error_code']).where('job_id', '=', jobId).orderBy('number').execute();

/**
 * Moves every success held on a job row into an attempt row, as svc wrote them before migration 020 (and an older
 * process still does): inserted through the view `delivery_attempts`, whose trigger writes `delivery_attempts_rows`.
 */
async function asAttemptRows(db: Kysely<Tables>): Promise<number> {
  const delivered = await db.selectFrom('delivery_jobs').selectAll().where('success_started_at', 'is not', null).execute();
  for (const j of delivered) {
    await db
      .insertInto('delivery_attempts')
      .values({
        job_id: j.id, webhook_id: j.webhook_id, number: j.attempt_count, started_at: Number(j.success_started_at), duration_ms: Number(j.success_duration_ms),
        status_code: j.success_status_code, error_code: null, error_message: null, response_snippet: j.success_snippet ?? '',
        remote_address: j.success_remote_address, dns_ms: j.success_dns_ms, connect_ms: j.success_connect_ms, tls_ms: j.success_tls_ms, first_byte_ms: j.success_first_byte_ms,
      })
      .execute();
  }
  await sql`update delivery_jobs set success_started_at = null, success_duration_ms = null, success_status_code = null, success_snippet = null,
              success_remote_address = null, success_dns_ms = null, success_connect_ms = null, success_tls_ms = null, success_first_byte_ms = null`.execute(db);
  return delivered.length;
}

describe.each(DIALECTS)('a delivered attempt kept on its job row (%s)', (dialect) => {
  let rig: DeliveryRig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
  });

  it('a success writes no attempt row; the attempts API shows it exactly as an attempt row shows it', async () => {
    rig = await createDeliveryRig(dialect);
    await rig.target();
    rig.receiver.setHandler((_req, res) => res.writeHead(202).end('queued, thanks'));
    await rig.createRecord({ title: 'x' });
    await waitFor(() => rig!.receiver.requests.length >= 1, 'the delivery');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    const job = await waitFor(async () => {
      const j = await rig!.job(id);
      return j.state === 'delivered' ? j : null;
    }, 'the job recorded delivered');
    const db = rig.ctx.database.db;
    expect(await rowsOf(db, id)).toEqual([]);
    const stored = await db.selectFrom('delivery_jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(job.attemptCount).toBe(1);
    expect(job.attempts).toEqual([
      {
        number: 1,
        startedAt: new Date(Number(stored.success_started_at)).toISOString(),
        durationMs: stored.success_duration_ms,
        statusCode: 202,
        error: null,
        responseSnippet: 'queued, thanks',
        remoteAddress: '127.0.0.1',
        timings: { dnsMs: stored.success_dns_ms, connectMs: stored.success_connect_ms, tlsMs: stored.success_tls_ms, firstByteMs: stored.success_first_byte_ms },
      },
    ]);
    // A first request on a new connection to an IP literal: connect, TLS and first byte measured, no look-up.
    expect(job.attempts[0].timings).toMatchObject({ dnsMs: null, connectMs: expect.any(Number), tlsMs: expect.any(Number), firstByteMs: expect.any(Number) });
    expect(Date.parse(job.attempts[0].startedAt)).toBeLessThanOrEqual(rig.receiver.requests[0]!.receivedAt.getTime());

    // The same attempt as an attempt row (before migration 020, or written by an older process): the same answer.
    expect(await asAttemptRows(db)).toBe(1);
    expect(await rowsOf(db, id)).toEqual([{ number: 1, status_code: 202, error_code: null }]);
    expect(await rig.job(id)).toEqual(job);
  });

  it('failed, then delivered: both attempts in order, the failure a row, the success on the job', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s,10ms,10ms' });
    await rig.target();
    let calls = 0;
    rig.receiver.setHandler((_req, res) => (++calls === 1 ? res.writeHead(503).end('busy') : res.writeHead(200).end('fine')));
    await rig.createRecord({ title: 'x' });
    await waitFor(() => rig!.receiver.requests.length >= 1, 'the first attempt');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    const job = await waitFor(async () => {
      const j = await rig!.job(id);
      return j.state === 'delivered' ? j : null;
    }, 'the job delivered by its second attempt');
    expect(rig.receiver.requests).toHaveLength(2);
    expect(job.attemptCount).toBe(2);
    expect(job.attempts.map((a: any) => [a.number, a.statusCode, a.error?.code ?? null, a.responseSnippet])).toEqual([
      [1, 503, 'http_status', 'busy'],
      [2, 200, null, 'fine'],
    ]);
    expect(Date.parse(job.attempts[0].startedAt)).toBeLessThanOrEqual(Date.parse(job.attempts[1].startedAt));
    const db = rig.ctx.database.db;
    expect(await rowsOf(db, id)).toEqual([{ number: 1, status_code: 503, error_code: 'http_status' }]);
    expect(await asAttemptRows(db)).toBe(1);
    expect(await rig.job(id)).toEqual(job);
  });
});

const OLD = `del_${'0'.repeat(25)}1`;
const NEW = `del_${'0'.repeat(25)}2`;

const NOW = Date.UTC(2026, 10, 20, 10, 30);
const MIN = 60_000;
const HOUR = 60 * MIN;

/** A deterministic stream of numbers in [0, 1), so the workload is the same on every run and database. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
}

interface Tried {
  webhookId: string;
  at: number;
  ms: number;
  ok: boolean;
}

describe.each(DIALECTS)('attempts on job rows beside attempt rows: statistics, older processes (%s)', (dialect) => {
  let t: TestApp | null = null;
  beforeEach(async () => {
    t = await createTestApp(dialect, {}, { clock: new ManualClock(NOW), resolver: async () => [{ address: '93.184.216.34', family: 4 as const }] });
    await seedEvent(t.ctx.database.db);
  });
  afterEach(async () => {
    await t?.close();
    t = null;
  });
  const target = async (name: string) =>
    (await t!.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t!.admin.headers, payload: { name, url: 'https://receiver.example/hook', topics: ['record.created'] } })).json().id as string;

  it('a mixed workload: the same statistics with successes on job rows and as attempt rows, equal to counts made apart', async () => {
    const app = t!;
    const { db, caps } = app.ctx.database;
    const targets = [await target('a'), await target('b')];

    // 60 jobs over the last 30 hours: delivered at once, after one or two failures, or dead after three; each
    // attempt written by the transition that records it, as the worker's completer writes it.
    const random = lcg(29);
    const tried: Tried[] = [];
    for (let j = 0; j < 60; j++) {
      const webhookId = targets[j % 2]!;
      const id = `del_${String(j).padStart(26, '0')}`;
      await seedJob(db, { id, webhookId });
      const failures = Math.floor(random() * 4); // 0..3; 3 = dead
      let at = NOW - Math.floor(random() * 30 * HOUR);
      for (let n = 1; n <= Math.min(failures + 1, 3); n++) {
        const lease = `lease_${j}_${n}`;
        await sql`update delivery_jobs set state = 'delivering', lease_id = ${lease}, lease_expires_at = ${NOW + HOUR} where id = ${id}`.execute(db);
        const ms = 5 + Math.floor(random() * 2_000);
        const ok = n > failures;
        const job = { id, lease };
        const attempt = { startedAt: at, durationMs: ms, statusCode: ok ? 200 : 500, responseSnippet: ok ? 'ok' : 'boom', error: null };
        const error = { code: 'http_status', message: 'The receiver answered 500.' };
        if (ok) expect(await complete(db, caps, { now: at + ms, done: [{ job, attempt }] })).toEqual(new Set([id]));
        else if (n === 3) expect(await markDead(db, caps, { now: at + ms, job, attempt: { ...attempt, error } })).toBe(true);
        else expect(await scheduleRetry(db, { now: at + ms, job, attempt: { ...attempt, error }, at: at + ms + 1 })).toBe(true);
        tried.push({ webhookId, at, ms, ok });
        at = Math.min(NOW, at + ms + 1 + Math.floor(random() * 3 * HOUR));
      }
    }
    const successes = tried.filter((a) => a.ok).length;
    expect(successes).toBeGreaterThan(20);
    expect(tried.length - successes).toBeGreaterThan(20);
    const rowCount = async () => Number((await db.selectFrom('delivery_attempts_rows').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    expect(await rowCount()).toBe(tried.length - successes);

    const windows = ['', `?since=${encodeURIComponent(new Date(NOW - 30 * HOUR).toISOString())}`, `?since=${encodeURIComponent(new Date(NOW - 90 * MIN).toISOString())}`];
    const stats = async () => {
      const out: unknown[] = [];
      for (const id of targets) for (const q of windows) out.push((await app.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${id}/stats${q}`, headers: app.admin.headers })).json());
      return out;
    };
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    const expected = (webhookId: string, since: number) => {
      const inWindow = tried.filter((a) => a.webhookId === webhookId && a.at >= since && a.at <= NOW);
      const ok = inWindow.filter((a) => a.ok);
      const failed = inWindow.filter((a) => !a.ok);
      const durations = inWindow.map((a) => a.ms).sort((x, y) => x - y);
      const rank = (p: number) => (durations.length === 0 ? null : durations[Math.max(1, Math.ceil(p * durations.length)) - 1]!);
      const buckets = [];
      for (let start = Math.floor(since / HOUR) * HOUR; start <= NOW; start += HOUR) {
        const inHour = inWindow.filter((a) => a.at >= start && a.at < start + HOUR);
        buckets.push({ start: iso(start), succeeded: inHour.filter((a) => a.ok).length, failed: inHour.filter((a) => !a.ok).length });
      }
      return {
        attempts: { total: inWindow.length, succeeded: ok.length, failed: failed.length },
        successRate: inWindow.length === 0 ? null : ok.length / inWindow.length,
        latencyMs: { p50: rank(0.5), p95: rank(0.95) },
        lastSuccessAt: iso(ok.length === 0 ? null : Math.max(...ok.map((a) => a.at))),
        lastFailureAt: iso(failed.length === 0 ? null : Math.max(...failed.map((a) => a.at))),
        buckets,
      };
    };
    const sinces = [NOW - 24 * HOUR, NOW - 30 * HOUR, NOW - 90 * MIN];
    const want = targets.flatMap((id) => sinces.map((since) => expected(id, since)));

    const onJobRows = await stats();
    expect(onJobRows).toEqual(want);
    expect(await asAttemptRows(db)).toBe(successes);
    expect(await rowCount()).toBe(tried.length);
    expect(await stats()).toEqual(onJobRows);
  });

  it('an older completion\'s attempt row, its failure rows and its prune go through the view and read the same', async () => {
    const app = t!;
    const { db, caps } = app.ctx.database;
    const webhookId = await target('a');
    const ok = { startedAt: NOW - 2 * MIN, durationMs: 40, statusCode: 204, responseSnippet: '', error: null, trace: { remoteAddress: '93.184.216.34', timings: { dnsMs: 1, connectMs: 2, tlsMs: 3, firstByteMs: 30 } } };
    const failed = { startedAt: NOW - 5 * MIN, durationMs: 70, statusCode: 500, responseSnippet: 'boom', error: { code: 'http_status', message: 'The receiver answered 500.' } };
    // The same history twice: OLD as the previous version writes it, NEW as this one does.
    for (const id of [OLD, NEW]) {
      await seedJob(db, { id, webhookId, state: 'delivering', lease: { id: 'lease_1', expiresAt: NOW + HOUR } });
      await scheduleRetry(db, { now: NOW, job: { id, lease: 'lease_1' }, attempt: failed, at: NOW });
      await sql`update delivery_jobs set state = 'delivering', lease_id = 'lease_2', lease_expires_at = ${NOW + HOUR} where id = ${id}`.execute(db);
    }
    expect(await complete(db, caps, { now: NOW, done: [{ job: { id: NEW, lease: 'lease_2' }, attempt: ok }] })).toEqual(new Set([NEW]));
    // The previous version's completion, as it was written: the update, then the attempt inserted into delivery_attempts.
    const now = NOW;
    if (dialect === 'postgres') {
      await sql`
        with done as (
          update delivery_jobs j set state = 'delivered', attempt_count = j.attempt_count + 1, lease_id = null, lease_expires_at = null,
                 last_error_code = null, last_error_message = null, updated_at = ${now}
            from unnest(${[OLD]}::text[], ${['lease_2']}::text[]) as held(id, lease)
           where j.id = held.id and j.state = 'delivering' and j.lease_id = held.lease
          returning j.id, j.attempt_count, j.webhook_id, held.lease),
        attempts as (
          insert into delivery_attempts (job_id, webhook_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet,
                                         remote_address, dns_ms, connect_ms, tls_ms, first_byte_ms)
          select done.id, done.webhook_id, done.attempt_count, ${ok.startedAt}, ${ok.durationMs}, ${ok.statusCode}, null, null, ${ok.responseSnippet},
                 ${ok.trace.remoteAddress}, 1, 2, 3, 30
            from done
          returning job_id)
        select id from done`.execute(db);
    } else {
      await db.transaction().execute(async (trx) => {
        await sql`update delivery_jobs set state = 'delivered', attempt_count = attempt_count + 1, lease_id = null, lease_expires_at = null,
                    last_error_code = null, last_error_message = null, updated_at = ${now} where id = ${OLD} and lease_id = 'lease_2'`.execute(trx);
        await sql`
          insert into delivery_attempts (job_id, webhook_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet,
                                         remote_address, dns_ms, connect_ms, tls_ms, first_byte_ms)
          select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, null, null, value ->> 6,
                 value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11
            from json_each(${JSON.stringify([[OLD, webhookId, 2, ok.startedAt, ok.durationMs, ok.statusCode, ok.responseSnippet, ok.trace.remoteAddress, 1, 2, 3, 30]])})`.execute(trx);
      });
    }
    expect(await rowsOf(db, OLD)).toEqual([
      { number: 1, status_code: 500, error_code: 'http_status' },
      { number: 2, status_code: 204, error_code: null },
    ]);
    expect(await rowsOf(db, NEW)).toEqual([{ number: 1, status_code: 500, error_code: 'http_status' }]);
    const detail = async (id: string) => {
      const { id: _id, ...rest } = (await app.app.inject({ method: 'GET', url: `/admin/v1/deliveries/${id}`, headers: app.admin.headers })).json();
      return { ...rest, envelope: { ...rest.envelope, id: null } };
    };
    const shown = await detail(NEW);
    expect(shown.attempts.map((a: any) => [a.number, a.statusCode, a.error?.code ?? null])).toEqual([[1, 500, 'http_status'], [2, 204, null]]);
    expect(await detail(OLD)).toEqual(shown);
    const health = (await app.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${webhookId}/stats`, headers: app.admin.headers })).json();
    expect(health.attempts).toEqual({ total: 4, succeeded: 2, failed: 2 });

    // The previous version's prune: attempts deleted through the view, then the jobs.
    const ids = [OLD, NEW];
    const removed = await db.transaction().execute(async (trx) => {
      const attempts = await trx.deleteFrom('delivery_attempts').where('job_id', 'in', ids).executeTakeFirst();
      await trx.deleteFrom('delivery_jobs').where('id', 'in', ids).execute();
      return Number(attempts.numDeletedRows);
    });
    // PostgreSQL counts the view's rows its trigger took (the success on NEW's row among them); SQLite counts none.
    expect(removed).toBe(dialect === 'postgres' ? 4 : 0);
    expect(await db.selectFrom('delivery_attempts').selectAll().execute()).toEqual([]);
  });
});
