import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, signatureValid, type DeliveryRig } from '../helpers/delivery.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { waitFor } from '../helpers/wait.js';
import { ManualClock } from '../../src/lib/clock.js';
import { claim } from '../../src/webhooks/queue/claim.js';
import { complete } from '../../src/webhooks/queue/complete.js';

describe.each(DIALECTS)('webhook delivery (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  const jobsFor = async (recordId: string) => (await rig.admin('GET', '/admin/v1/deliveries?limit=100')).json().items.filter((j: any) => j.recordId === recordId);
  const settled = (id: string, state: string) => waitFor(async () => ((await rig.job(id)).state === state ? rig.job(id) : null), `job ${id} ${state}`);

  it('delivers a committed record, signed exactly as the seed says', async () => {
    rig = await createDeliveryRig(dialect);
    const target = await rig.target();
    expect(target.secret).toMatch(/^whsec_/);
    const rec = await rig.createRecord({ title: 'Hello' });
    await waitFor(() => rig.receiver.requests.length === 1, 'the delivery');
    const req = rig.receiver.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('svc-webhooks/1');
    expect(req.headers['svc-timestamp']).toMatch(/^\d{10}$/);
    expect(Math.abs(Number(req.headers['svc-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect(req.headers['svc-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(signatureValid(req.headers, req.body, [target.secret])).toBe(true);
    expect(signatureValid(req.headers, req.body, ['whsec_wrong'])).toBe(false);
    const envelope = JSON.parse(req.body);
    expect(Object.keys(envelope)).toEqual(['version', 'id', 'topic', 'collection', 'recordId', 'payload']);
    expect(envelope).toMatchObject({ version: '1', topic: 'record.created', collection: 'issues', recordId: rec.id });
    expect(envelope.id).toMatch(/^del_/);
    expect(req.headers['svc-delivery']).toBe(envelope.id);
    expect(envelope.payload.record).toEqual(rec);
    expect(typeof envelope.payload.occurredAt).toBe('string');
    const job = await settled(envelope.id, 'delivered');
    expect(job).toMatchObject({ webhookId: target.id, topic: 'record.created', recordId: rec.id, attemptCount: 1, lastError: null, nextAttemptAt: null });
    expect(job.envelope).toEqual(envelope);
    expect(job.attempts).toEqual([expect.objectContaining({ number: 1, statusCode: 200, error: null, responseSnippet: 'ok' })]);
  });

  it('record.updated carries previous; record.deleted the last state; unsubscribed topics get nothing', async () => {
    rig = await createDeliveryRig(dialect);
    await rig.target(['record.updated', 'record.deleted']);
    const rec = await rig.createRecord({ title: 'a' });
    await rig.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${rec.id}`, headers: rig.auth, payload: { data: { title: 'b' } } });
    await rig.app.inject({ method: 'DELETE', url: `/api/v1/collections/issues/records/${rec.id}`, headers: rig.auth });
    await waitFor(() => rig.receiver.requests.length === 2, 'two deliveries');
    const [updated, deleted] = rig.receiver.requests.map((r) => JSON.parse(r.body)).sort((a, b) => a.topic.localeCompare(b.topic)).reverse();
    expect(updated.topic).toBe('record.updated');
    expect(updated.payload.previous.data).toEqual({ title: 'a' });
    expect(updated.payload.record).toMatchObject({ version: 2, data: { title: 'b' } });
    expect(deleted.topic).toBe('record.deleted');
    expect(deleted.payload.record).toMatchObject({ version: 2, data: { title: 'b' } });
  });

  it('500 then 200: retried when the schedule says, with the same id and body, signed afresh', async () => {
    // The clock is moved by hand: the retry is due exactly 5 minutes later (jitter pinned to the middle of ±10 %).
    const clock = new ManualClock(Date.parse('2026-11-23T12:00:00Z'));
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s,5m,5m' }, { clock, random: () => 0.5 });
    const target = await rig.target();
    let calls = 0;
    rig.receiver.setHandler((_req, res) => {
      calls++;
      res.writeHead(calls === 1 ? 500 : 200).end(calls === 1 ? 'boom' : 'fine');
    });
    await rig.createRecord({ title: 'retry me' });
    await waitFor(() => rig.receiver.requests.length === 1, 'the first attempt');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    const waiting = await settled(id, 'pending');
    expect(waiting.nextAttemptAt).toBe('2026-11-23T12:05:00.000Z');
    // One millisecond early: a claim runs, and finds nothing due.
    clock.advance(5 * 60_000 - 1);
    await rig.worker.claimNow();
    await rig.worker.whenIdle();
    expect(rig.receiver.requests).toHaveLength(1);
    clock.advance(1);
    await rig.worker.claimNow();
    await waitFor(() => rig.receiver.requests.length === 2, 'the retry');
    const [a, b] = rig.receiver.requests;
    expect(a!.body).toBe(b!.body);
    expect(a!.headers['svc-delivery']).toBe(b!.headers['svc-delivery']);
    expect(signatureValid(b!.headers, b!.body, [target.secret])).toBe(true);
    expect(Number(b!.headers['svc-timestamp']) - Number(a!.headers['svc-timestamp'])).toBe(300);
    const job = await settled(String(a!.headers['svc-delivery']), 'delivered');
    expect(job.attempts.map((x: any) => [x.number, x.statusCode, x.error?.code ?? null, x.responseSnippet])).toEqual([
      [1, 500, 'http_status', 'boom'],
      [2, 200, null, 'fine'],
    ]);
  });

  it('fails until dead, then a manual retry delivers after the receiver is repaired', async () => {
    rig = await createDeliveryRig(dialect);
    await rig.target();
    rig.receiver.setHandler((_req, res) => res.writeHead(503).end('down'));
    await rig.createRecord({ title: 'doomed' });
    await waitFor(() => rig.receiver.requests.length === 3, 'three attempts');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    const dead = await settled(id, 'dead');
    expect(dead.attemptCount).toBe(3);
    expect(dead.lastError).toMatchObject({ code: 'http_status' });
    const deadList = (await rig.admin('GET', '/admin/v1/deliveries?state=dead')).json();
    expect(deadList.items.map((j: any) => j.id)).toEqual([id]);
    // Repaired before the retry: the worker may send the retried job before the retry's answer is back here.
    rig.receiver.setHandler((_req, res) => res.writeHead(204).end());
    const notDead = await rig.admin('POST', `/admin/v1/deliveries/${id}/retry`);
    expect(notDead.statusCode).toBe(200);
    const done = await settled(id, 'delivered');
    expect(done.attempts.map((a: any) => a.number)).toEqual([1, 2, 3, 4]);
    const again = await rig.admin('POST', `/admin/v1/deliveries/${id}/retry`);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('conflict');
  });

  it('never follows a redirect', async () => {
    rig = await createDeliveryRig(dialect);
    const elsewhere = await startHttpsReceiver();
    try {
      await rig.target();
      rig.receiver.setHandler((_req, res) => res.writeHead(307, { location: `${elsewhere.url}/stolen` }).end());
      await rig.createRecord({ title: 'redirect' });
      await waitFor(() => rig.receiver.requests.length === 3, 'attempts');
      const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
      const job = await settled(id, 'dead');
      expect(job.attempts[0].statusCode).toBe(307);
      expect(elsewhere.requests).toHaveLength(0);
      expect(elsewhere.connections).toBe(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('a hang past the timeout is a timeout; 429 Retry-After lengthens the wait', async () => {
    const clock = new ManualClock(Date.parse('2026-11-23T12:00:00Z'));
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_TIMEOUT_MS: '300', SVC_WEBHOOK_RETRY_SCHEDULE: '0s,0s,10s' }, { clock, random: () => 0.5 });
    await rig.target();
    let n = 0;
    rig.receiver.setHandler((_req, res) => {
      n++;
      if (n === 1) return; // hang
      if (n === 2) return void res.writeHead(429, { 'retry-after': '120' }).end();
      res.writeHead(200).end();
    });
    await rig.createRecord({ title: 'slow' });
    await waitFor(() => rig.receiver.requests.length === 2, 'two attempts');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    // The schedule says 10 s; the receiver asked for 120.
    const waiting = await settled(id, 'pending');
    expect(waiting.nextAttemptAt).toBe('2026-11-23T12:02:00.000Z');
    clock.advance(119_999);
    await rig.worker.claimNow();
    await rig.worker.whenIdle();
    expect(rig.receiver.requests).toHaveLength(2);
    clock.advance(1);
    await rig.worker.claimNow();
    const job = await settled(id, 'delivered');
    expect(job.attempts[0]).toMatchObject({ statusCode: null, error: { code: 'timeout' } });
    expect(job.attempts[0].durationMs).toBeLessThan(1500);
    expect(job.attempts[1]).toMatchObject({ statusCode: 429 });
    expect(job.attempts[2]).toMatchObject({ number: 3, statusCode: 200 });
  });

  it('connection refused and a certificate for the wrong name are failed attempts', async () => {
    rig = await createDeliveryRig(dialect);
    const wrongName = await startHttpsReceiver({ altNames: ['wrong.example'] });
    const closedPort = await startHttpsReceiver();
    const closedUrl = closedPort.url;
    await closedPort.close();
    try {
      const refused = await rig.target(['record.created'], `${closedUrl}/hook`);
      const tls = await rig.target(['record.created'], `${wrongName.url}/hook`);
      await rig.createRecord({ title: 'x' });
      const jobs = await waitFor(async () => {
        const items = (await rig.admin('GET', '/admin/v1/deliveries?state=dead')).json().items;
        return items.length === 2 ? items : null;
      }, 'both dead');
      const byTarget = Object.fromEntries(jobs.map((j: any) => [j.webhookId, j.lastError.code]));
      expect(byTarget[refused.id]).toBe('connection_failed');
      expect(byTarget[tls.id]).toBe('tls_failed');
      expect(wrongName.requests).toHaveLength(0);
    } finally {
      await wrongName.close();
    }
  });

  it('a disabled target gets no new jobs and its pending jobs wait; a deleted target kills its jobs', async () => {
    rig = await createDeliveryRig(dialect);
    const target = await rig.target();
    rig.receiver.setHandler((_req, res) => res.writeHead(500).end());
    await rig.worker.stop();
    await rig.createRecord({ title: 'queued' });
    const off = await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { enabled: false });
    expect(off.json().enabled).toBe(false);
    await rig.createRecord({ title: 'while disabled' });
    const jobs = (await rig.admin('GET', '/admin/v1/deliveries')).json().items;
    expect(jobs).toHaveLength(1);
    await rig.worker.start();
    // A claim runs with the target disabled, and takes nothing.
    await rig.worker.claimNow();
    await rig.worker.whenIdle();
    expect(rig.receiver.requests).toHaveLength(0);
    expect((await rig.job(jobs[0].id)).state).toBe('pending');
    const del = await rig.admin('DELETE', `/admin/v1/webhooks/${target.id}`);
    expect(del.statusCode).toBe(204);
    const job = await rig.job(jobs[0].id);
    expect(job).toMatchObject({ state: 'dead', lastError: { code: 'target_deleted' } });
    expect((await rig.admin('POST', `/admin/v1/deliveries/${jobs[0].id}/retry`)).statusCode).toBe(409);
  });

  it('a dead job whose target is deleted afterwards cannot be retried; the target is gone but its row and jobs stay', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s' });
    const target = await rig.target();
    rig.receiver.setHandler((_req, res) => res.writeHead(503).end('down'));
    await rig.createRecord({ title: 'orphan' });
    await waitFor(() => rig.receiver.requests.length === 1, 'the attempt');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    await settled(id, 'dead');
    expect((await rig.admin('DELETE', `/admin/v1/webhooks/${target.id}`)).statusCode).toBe(204);
    const retry = await rig.admin('POST', `/admin/v1/deliveries/${id}/retry`);
    expect(retry.statusCode).toBe(409);
    expect(retry.json()).toMatchObject({ code: 'conflict', detail: 'The target of this job was deleted.' });
    expect(await rig.job(id)).toMatchObject({ state: 'dead', webhookId: target.id, lastError: { code: 'http_status' } });
    // Gone for the API: every target route answers 404, lists leave it out.
    for (const [method, url, body] of [
      ['GET', `/admin/v1/webhooks/${target.id}`, undefined],
      ['PATCH', `/admin/v1/webhooks/${target.id}`, { name: 'x' }],
      ['DELETE', `/admin/v1/webhooks/${target.id}`, undefined],
      ['POST', `/admin/v1/webhooks/${target.id}/rotate-secret`, { overlapSeconds: 0 }],
      ['POST', `/admin/v1/webhooks/${target.id}/test`, undefined],
    ] as const) {
      expect((await rig.admin(method, url, body)).statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await rig.admin('GET', '/admin/v1/webhooks')).json().items).toEqual([]);
    // The row stays for its jobs' sake, without its secrets.
    const row = await rig.ctx.database.db.selectFrom('webhooks').selectAll().where('id', '=', target.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ enabled: 0, secret_sealed: null, previous_secret_sealed: null });
    expect(row.deleted_at).not.toBeNull();
    await rig.createRecord({ title: 'after the delete' });
    expect((await rig.admin('GET', '/admin/v1/deliveries')).json().items).toHaveLength(1);
  });

  it('rotate-secret signs with both secrets during the overlap, newest first', async () => {
    rig = await createDeliveryRig(dialect);
    const target = await rig.target();
    const rotated = (await rig.admin('POST', `/admin/v1/webhooks/${target.id}/rotate-secret`, { overlapSeconds: 3600 })).json();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(target.secret);
    await rig.createRecord({ title: 'rotating' });
    await waitFor(() => rig.receiver.requests.length === 1, 'delivery');
    const req = rig.receiver.requests[0]!;
    const entries = String(req.headers['svc-signature']).split(' ');
    expect(entries).toHaveLength(2);
    expect(signatureValid({ ...req.headers, 'svc-signature': entries[0] }, req.body, [rotated.secret])).toBe(true);
    expect(signatureValid({ ...req.headers, 'svc-signature': entries[1] }, req.body, [target.secret])).toBe(true);
    const immediate = (await rig.admin('POST', `/admin/v1/webhooks/${target.id}/rotate-secret`, { overlapSeconds: 0 })).json();
    await rig.createRecord({ title: 'after' });
    await waitFor(() => rig.receiver.requests.length === 2, 'second delivery');
    expect(String(rig.receiver.requests[1]!.headers['svc-signature'])).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(signatureValid(rig.receiver.requests[1]!.headers, rig.receiver.requests[1]!.body, [immediate.secret])).toBe(true);
  });

  it('a write in a process whose worker has room hands the job over: born delivering under its lease, no claim', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_TARGET_CONCURRENCY: '1' });
    const target = await rig.target();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    rig.receiver.setHandler(async (_req, res) => {
      await gate;
      res.writeHead(200).end('ok');
    });
    const db = rig.ctx.database.db;
    const jobsOf = async () => db.selectFrom('delivery_jobs').select(['id', 'state', 'lease_id', 'lease_expires_at']).orderBy('id').execute();
    // One slot for the target, so the worker holds at most two jobs: the third write leaves its job pending.
    for (const title of ['a', 'b', 'c']) await rig.createRecord({ title });
    const rows = await jobsOf();
    expect(rows.map((r) => r.state)).toEqual(['delivering', 'delivering', 'pending']);
    expect(rows[0]!.lease_id).toMatch(/^lease_/);
    // Each hand-off has a lease token of its own, as each claim does: a stale write of one never lands on another.
    expect(rows[1]!.lease_id).toMatch(/^lease_/);
    expect(rows[1]!.lease_id).not.toBe(rows[0]!.lease_id);
    expect(Math.abs(Number(rows[0]!.lease_expires_at) - (Date.now() + 60_000))).toBeLessThan(5_000);
    release();
    for (const r of rows) await settled(r.id, 'delivered');
    expect(rig.receiver.requests).toHaveLength(3);
    expect(rig.receiver.requests.every((req) => signatureValid(req.headers, req.body, [target.secret]))).toBe(true);
  });

  it('without a running worker every job is written pending, for any worker to claim', async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    await rig.target();
    await rig.createRecord({ title: 'queued' });
    const rows = await rig.ctx.database.db.selectFrom('delivery_jobs').select(['state', 'lease_id']).execute();
    expect(rows).toEqual([{ state: 'pending', lease_id: null }]);
    await rig.worker.start();
    await waitFor(() => rig.receiver.requests.length === 1, 'claimed delivery');
  });

  it('POST /webhooks/{id}/test delivers a webhook.test envelope', async () => {
    rig = await createDeliveryRig(dialect);
    const target = await rig.target(['record.created']);
    const res = await rig.admin('POST', `/admin/v1/webhooks/${target.id}/test`);
    expect(res.statusCode).toBe(202);
    const { deliveryId } = res.json();
    await waitFor(() => rig.receiver.requests.length === 1, 'test delivery');
    const env = JSON.parse(rig.receiver.requests[0]!.body);
    expect(env).toMatchObject({ version: '1', id: deliveryId, topic: 'webhook.test', collection: '_test', recordId: 'rec_00000000000000000000000000', payload: { test: true } });
    await settled(deliveryId, 'delivered');
  });

  it('the secret is stored sealed: a database dump does not contain it', async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const target = await rig.target();
    const rows = await rig.ctx.database.db.selectFrom('webhooks').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(target.secret);
    expect(JSON.stringify(rows)).not.toContain(target.secret.slice(6));
  });

  it('a failing transaction after the job insert leaves neither record nor job', async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    await rig.target();
    const db = rig.ctx.database.db;
    if (rig.ctx.database.caps.name === 'sqlite') {
      await sql`create trigger fail_after_job after insert on delivery_jobs begin select raise(abort, 'injected failure'); end`.execute(db);
    } else {
      await sql`create function fail_after_job() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(db);
      await sql`create trigger fail_after_job after insert on delivery_jobs for each row execute function fail_after_job()`.execute(db);
    }
    const res = await rig.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: rig.auth, payload: { data: { title: 'never' } } });
    expect(res.statusCode).toBe(500);
    expect(await db.selectFrom('records').selectAll().execute()).toHaveLength(0);
    expect(await db.selectFrom('delivery_jobs').selectAll().execute()).toHaveLength(0);
    expect(await db.selectFrom('events').selectAll().execute()).toHaveLength(0);
  });

  it('a lease that expired is rescued and delivered by another claim; the first claim\'s late write changes nothing', async () => {
    const clock = new ManualClock(Date.parse('2026-11-23T12:00:00Z'));
    rig = await createDeliveryRig(dialect, {}, { startWorker: false, clock });
    const target = await rig.target();
    const rec = await rig.createRecord({ title: 'lease' });
    const { db, caps } = rig.ctx.database;
    const [[stale]] = await claim(db, caps, { now: clock.now(), leaseMs: 60_000, targets: [{ webhookId: target.id, limit: 10 }] });
    expect(stale).toBeDefined();
    // Claimed jobs are invisible to other claims while the lease holds, up to its last millisecond.
    clock.advance(59_999);
    expect(await claim(db, caps, { now: clock.now(), leaseMs: 60_000, targets: [{ webhookId: target.id, limit: 10 }] })).toEqual([[]]);
    clock.advance(2);
    // The worker rescues expired leases when it starts, then claims the job under a lease of its own.
    await rig.worker.start();
    const job = await settled(stale!.id, 'delivered');
    expect(rig.receiver.requests).toHaveLength(1);
    const late = await complete(db, caps, { now: clock.now(), done: [{ job: stale!, attempt: { startedAt: clock.now(), durationMs: 1, statusCode: 200, error: null, responseSnippet: '' } }] });
    expect(late.size).toBe(0);
    expect((await rig.job(stale!.id)).attempts).toHaveLength(job.attempts.length);
    expect(await jobsFor(rec.id)).toHaveLength(1);
  });
});
