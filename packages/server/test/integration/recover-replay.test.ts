import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ManualClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { BATCH } from '../../src/webhooks/recover-replay.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

const START = Date.UTC(2026, 10, 20, 10, 0);
const MIN = 60_000;
const DAY = 86_400_000;
const publicResolver = async () => [{ address: '93.184.216.34', family: 4 as const }];

/** SPEC §10 "Recover and replay", through the admin API. */
describe.each(DIALECTS)('recover and replay (%s)', (dialect) => {
  let t: TestApp;
  let clock: ManualClock;
  let auth: Record<string, string>;
  beforeEach(async () => {
    clock = new ManualClock(START);
    t = await createTestApp(dialect, {}, { clock, resolver: publicResolver });
    await t.collection('issues', [{ name: 'title', type: 'text', required: true }]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterEach(async () => t.close());

  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => t.app.inject({ method, url, headers: t.admin.headers, payload });
  const target = async (topics: string[], enabled = true): Promise<string> => {
    const res = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: 'https://receiver.example/hook', topics, enabled });
    expect(res.statusCode).toBe(201);
    return res.json().id;
  };
  const write = async (method: 'POST' | 'PATCH', url: string, data: object) => {
    const res = await t.app.inject({ method, url, headers: auth, payload: { data } });
    expect(res.statusCode).toBeLessThan(300);
    return res.json();
  };
  const jobsOf = async (webhookId: string) => (await admin('GET', `/admin/v1/deliveries?webhookId=${webhookId}&limit=500`)).json().items as any[];
  const iso = (ms: number) => new Date(ms).toISOString();

  it("replay judges stored events by the target's collections and filter, against the collection as it is now", async () => {
    const res0 = await admin('POST', '/admin/v1/webhooks', {
      name: 'w', url: 'https://receiver.example/hook', topics: ['record.created'], enabled: false, collections: ['issues'], filter: "title ~ 'bug'",
    });
    expect(res0.statusCode, res0.body).toBe(201);
    const filtered = res0.json().id as string;
    clock.advance(MIN);
    const bug = await write('POST', '/api/v1/collections/issues/records', { title: 'A Bug' });
    await write('POST', '/api/v1/collections/issues/records', { title: 'a feature' });
    clock.advance(MIN);
    expect((await admin('PATCH', `/admin/v1/webhooks/${filtered}`, { enabled: true })).statusCode).toBe(200);
    const res = await admin('POST', `/admin/v1/webhooks/${filtered}/replay`, { since: iso(START) });
    expect(res.json()).toMatchObject({ jobs: 1 });
    expect((await jobsOf(filtered)).map((j) => j.recordId)).toEqual([bug.id]);
  });

  it('replay creates a job for each matching event the target missed, once; since moves forward to the retention horizon', async () => {
    const live = await target(['record.created']);
    const late = await target(['record.created', 'record.updated'], false);
    clock.advance(MIN);
    const rec = await write('POST', '/api/v1/collections/issues/records', { title: 'a' });
    clock.advance(MIN);
    await write('PATCH', `/api/v1/collections/issues/records/${rec.id}`, { title: 'b' });
    expect(await jobsOf(late)).toEqual([]);
    await admin('POST', `/admin/v1/webhooks/${live}/test`);
    clock.advance(MIN);

    const body = { since: iso(START - 60 * MIN) };
    const refused = await admin('POST', `/admin/v1/webhooks/${late}/replay`, body);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('conflict');

    expect((await admin('PATCH', `/admin/v1/webhooks/${late}`, { enabled: true })).statusCode).toBe(200);
    const res = await admin('POST', `/admin/v1/webhooks/${late}/replay`, body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ jobs: 2, since: iso(START - 60 * MIN) });
    const jobs = await jobsOf(late);
    // The record's two events; never the other target's webhook.test.
    expect(jobs.map((j) => j.topic).sort()).toEqual(['record.created', 'record.updated']);
    expect(jobs.every((j) => j.state === 'pending' && j.recordId === rec.id && j.attemptCount === 0)).toBe(true);
    const detail = (await admin('GET', `/admin/v1/deliveries/${jobs.find((j) => j.topic === 'record.updated').id}`)).json();
    expect(detail.envelope).toMatchObject({ id: detail.id, topic: 'record.updated', recordId: rec.id, payload: { previous: { data: { title: 'a' } } } });

    // Asked again: every event has its job.
    expect((await admin('POST', `/admin/v1/webhooks/${late}/replay`, body)).json()).toEqual({ jobs: 0, since: iso(START - 60 * MIN) });
    // The live target already had its record.created job, and is not subscribed to updates.
    expect((await admin('POST', `/admin/v1/webhooks/${live}/replay`, body)).json().jobs).toBe(0);
    // A window that ends before the events holds none.
    expect((await admin('POST', `/admin/v1/webhooks/${late}/replay`, { since: iso(START - 60 * MIN), until: iso(START) })).json().jobs).toBe(0);

    const old = await admin('POST', `/admin/v1/webhooks/${late}/replay`, { since: iso(START - 40 * DAY) });
    expect(old.json()).toEqual({ jobs: 0, since: iso(clock.now() - 30 * DAY) });
  });

  it("replay to a target that orders by record sends each record's events one at a time, oldest first", async () => {
    const res0 = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: 'https://receiver.example/hook', topics: ['record.created', 'record.updated'], enabled: false, ordering: 'record' });
    expect(res0.statusCode, res0.body).toBe(201);
    const ordered = res0.json().id as string;
    clock.advance(MIN);
    const a = await write('POST', '/api/v1/collections/issues/records', { title: 'a1' });
    const b = await write('POST', '/api/v1/collections/issues/records', { title: 'b1' });
    for (const v of [2, 3]) await write('PATCH', `/api/v1/collections/issues/records/${a.id}`, { title: `a${v}` });
    clock.advance(MIN);
    expect((await admin('PATCH', `/admin/v1/webhooks/${ordered}`, { enabled: true })).statusCode).toBe(200);
    expect((await admin('POST', `/admin/v1/webhooks/${ordered}/replay`, { since: iso(START) })).json().jobs).toBe(4);
    const jobs = await t.ctx.database.db.selectFrom('delivery_jobs as j').innerJoin('events as e', 'e.id', 'j.event_id')
      .select(['j.record_id', 'j.state', 'e.payload']).where('j.webhook_id', '=', ordered).orderBy('j.id').execute();
    const titles = (recordId: string, state: string) => jobs.filter((j) => j.record_id === recordId && j.state === state).map((j) => JSON.parse(j.payload!).record.data.title);
    expect(titles(a.id, 'pending')).toEqual(['a1']);
    expect(titles(a.id, 'held')).toEqual(['a2', 'a3']);
    expect(titles(b.id, 'pending')).toEqual(['b1']);
  });

  it('two replays of one target at once give each missed event one job, not two', async () => {
    const late = await target(['record.created'], false);
    clock.advance(MIN);
    // More than two batches of 500, so the replays' batches interleave.
    const operations = Array.from({ length: 100 }, (_, i) => ({ method: 'POST', collection: 'issues', data: { title: `t${i}` } }));
    for (let i = 0; i < 12; i++) expect((await t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: auth, payload: { operations } })).statusCode).toBe(200);
    clock.advance(MIN);
    expect((await admin('PATCH', `/admin/v1/webhooks/${late}`, { enabled: true })).statusCode).toBe(200);
    const body = { since: iso(START) };
    const answers = await Promise.all([1, 2, 3].map(() => admin('POST', `/admin/v1/webhooks/${late}/replay`, body)));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    expect(answers.reduce((n, a) => n + a.json().jobs, 0)).toBe(1200);
    const perEvent = await t.ctx.database.db.selectFrom('delivery_jobs').select(['event_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('webhook_id', '=', late).groupBy('event_id').execute();
    expect(perEvent).toHaveLength(1200);
    expect(perEvent.filter((r) => Number(r.n) !== 1)).toEqual([]);
  }, 60_000);

  it('recover sends the dead jobs created in the window back to pending, in batches, answering the total', async () => {
    const id = await target(['record.created']);
    const rec = await write('POST', '/api/v1/collections/issues/records', { title: 'a' });
    const [job] = await jobsOf(id);
    const { db } = t.ctx.database;
    // BATCH + 1 dead jobs of this target created in the window, one outside it.
    const rows = Array.from({ length: BATCH + 2 }, (_v, i) => {
      const at = i === 0 ? START - 2 * DAY : START - 30 * MIN;
      return {
        id: newId('del', at), webhook_id: id, topic: 'record.created', collection: 'issues', record_id: rec.id,
        state: 'dead' as const, attempt_count: 3, round_start: 0, next_attempt_at: at, lease_id: null, lease_expires_at: null,
        last_error_code: 'http_status', last_error_message: 'The receiver answered 500.', created_at: at, updated_at: at,
      };
    });
    const event = await db.selectFrom('delivery_jobs').select('event_id').where('id', '=', job.id).executeTakeFirstOrThrow();
    await db.insertInto('delivery_jobs').values(rows.map((r) => ({ ...r, event_id: event.event_id }))).execute();

    await admin('PATCH', `/admin/v1/webhooks/${id}`, { enabled: false });
    expect((await admin('POST', `/admin/v1/webhooks/${id}/recover`, { since: iso(START - DAY) })).statusCode).toBe(409);
    await admin('PATCH', `/admin/v1/webhooks/${id}`, { enabled: true });

    const res = await admin('POST', `/admin/v1/webhooks/${id}/recover`, { since: iso(START - DAY) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ jobs: BATCH + 1 });
    const states = await db.selectFrom('delivery_jobs').select(['state', sql<number>`count(*)`.as('n')]).where('webhook_id', '=', id).groupBy('state').execute();
    expect(Object.fromEntries(states.map((s) => [s.state, Number(s.n)]))).toEqual({ pending: BATCH + 2, dead: 1 });
    const recovered = await db.selectFrom('delivery_jobs').selectAll().where('id', '=', rows[1]!.id).executeTakeFirstOrThrow();
    expect(recovered).toMatchObject({ state: 'pending', round_start: 3, attempt_count: 3 });
    expect((await admin('POST', `/admin/v1/webhooks/${id}/recover`, { since: iso(START - DAY) })).json()).toEqual({ jobs: 0 });
  });

  it('a window that ends before it starts, or a missing since, is validation_failed; an unknown target 404', async () => {
    const id = await target(['record.created']);
    for (const verb of ['recover', 'replay']) {
      const backwards = await admin('POST', `/admin/v1/webhooks/${id}/${verb}`, { since: iso(START), until: iso(START - MIN) });
      expect(backwards.statusCode).toBe(422);
      expect(backwards.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/until' }] });
      const missing = await admin('POST', `/admin/v1/webhooks/${id}/${verb}`, {});
      expect(missing.statusCode).toBe(422);
      expect((await admin('POST', `/admin/v1/webhooks/wh_00000000000000000000000000/${verb}`, { since: iso(START) })).statusCode).toBe(404);
    }
  });
});
