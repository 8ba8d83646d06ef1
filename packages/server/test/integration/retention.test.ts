import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { idFloor } from '../../src/lib/ids.js';
import { prunePass, type PruneCounts } from '../../src/retention.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { svc } from '../helpers/svc-command.js';
import { waitFor } from '../helpers/wait.js';

// 0.0001 days is 8.64 s: one step of the manual clock passes it, two steps pass the dead jobs' 0.0002.
const RETENTION = { SVC_RETENTION_DELIVERED_DAYS: '0.0001', SVC_RETENTION_DEAD_DAYS: '0.0002', SVC_RETENTION_EVENTS_DAYS: '0.0001', SVC_WEBHOOK_RETRY_SCHEDULE: '0s' };
const STEP_MS = 10_000;
let epoch = Date.parse('2030-01-01T00:00:00Z');

/** SPEC §10 retention, and the feed's pruned horizon of §7. */
describe.each(DIALECTS)('retention (%s)', (dialect) => {
  let rig: DeliveryRig;
  let clock: ManualClock;
  let goneAnswers410 = true;
  afterEach(async () => rig?.close());

  const start = async () => {
    // Ahead of the real clock: ids carry the time they were made (never earlier than any id made before), and
    // retention walks event ids by time.
    // Each test an hour after the last: ids made by an earlier test must not be ahead of this one's clock.
    epoch += 3_600_000;
    clock = new ManualClock(epoch);
    rig = await createDeliveryRig(dialect, RETENTION, { clock });
    goneAnswers410 = true;
    rig.receiver.setHandler((req, res) => res.writeHead(req.url === '/dying' ? 500 : req.url === '/gone' && goneAnswers410 ? 410 : 200).end('x'));
  };
  const count = async (table: 'delivery_jobs' | 'delivery_attempts' | 'events') =>
    Number((await rig.ctx.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  // One statement, so a job moving from pending to delivering between two reads cannot slip through.
  const settled = () =>
    waitFor(async () => {
      const { db } = rig.ctx.database;
      const busy = await db.selectFrom('delivery_jobs').select('id')
        .where((eb) => eb.or([eb('state', '=', 'delivering'), eb.and([eb('state', '=', 'pending'), eb('webhook_id', 'in', db.selectFrom('webhooks').select('id').where('enabled', '=', 1))])]))
        .execute();
      return busy.length === 0;
    }, 'every job settled');
  const feed = (query: string) => rig.admin('GET', `/admin/v1/events${query}`);
  const make = async (name: string, path: string, enabled = true) =>
    (await rig.admin('POST', '/admin/v1/webhooks', { name, url: `${rig.receiver.url}${path}`, topics: ['record.created'], enabled })).json() as { id: string };

  it('removes delivered and dead jobs with their attempts and the events nobody needs; the feed answers 410 below the horizon', async () => {
    await start();
    const origin = (await feed('?after=now')).json().nextCursor;
    await make('ok', '/ok');
    const rec0 = await rig.createRecord({ title: 'delivered only' });
    await settled();
    const afterRec0 = (await feed('')).json().nextCursor;
    await make('dying', '/dying');
    // Answers 410: disabled at once, its job waits pending.
    const gone = await make('gone', '/gone');
    const rec1 = await rig.createRecord({ title: 'delivered, dead and waiting' });
    await settled();
    // The head now: after rec1's event, the delivery.dead and webhook.disabled it caused (no subscribers: no jobs).
    const afterRec1 = (await feed('')).json().nextCursor;
    clock.advance(STEP_MS);
    const rec2 = await rig.createRecord({ title: 'fresh' });
    await settled();

    // rec0: its delivered job and its event go; rec1: the delivered job goes, the dead one (0.0002 days) and the
    // waiting one stay, and so does the event they need; its two operational events go; rec2 is too young.
    const dry = await prunePass(rig.ctx, { dryRun: true });
    expect(dry).toEqual({ delivery_jobs: 2, delivery_attempts: 2, events: 3 });
    expect(await prunePass(rig.ctx, { dryRun: true })).toEqual(dry);
    expect(await prunePass(rig.ctx)).toEqual(dry);
    const states = async () => (await rig.admin('GET', '/admin/v1/deliveries?limit=100')).json().items.map((j: any) => [j.recordId, j.state]).sort();
    expect(await states()).toEqual([[rec1.id, 'dead'], [rec1.id, 'pending'], [rec2.id, 'dead'], [rec2.id, 'delivered']].sort());
    // rec1's event is kept for its jobs, but it lies below the pruned horizon: no longer in the feed.
    expect((await feed('?limit=100')).json().items.map((e: any) => [e.topic, e.collection])).toEqual([['record.created', 'issues'], ['delivery.dead', '_svc']]);
    expect((await feed('?limit=100')).json().items[0].recordId).toBe(rec2.id);

    // Below the horizon: 410 (a consumer there would miss pruned events); at it and above: as before.
    for (const cursor of [origin, afterRec0]) {
      const expired = await feed(`?after=${cursor}`);
      expect(expired.statusCode).toBe(410);
      expect(expired.json().code).toBe('cursor_expired');
    }
    const reader = { authorization: `Bearer ${await rig.token(['events:read'])}` };
    expect((await rig.app.inject({ method: 'GET', url: `/api/v1/events?after=${origin}`, headers: reader })).statusCode).toBe(410);
    expect((await rig.app.inject({ method: 'GET', url: '/api/v1/events', headers: reader })).json().items.map((e: any) => e.recordId)).toEqual([rec2.id]);
    const resumed = await feed(`?after=${afterRec1}`);
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json().items.map((e: any) => e.topic)).toEqual(['record.created', 'delivery.dead']);

    // Another step: rec2's delivered job and rec1's dead one go; every event left is needed, or the newest.
    clock.advance(STEP_MS);
    expect(await prunePass(rig.ctx)).toEqual({ delivery_jobs: 2, delivery_attempts: 2, events: 0 });
    expect(await states()).toEqual([[rec1.id, 'pending'], [rec2.id, 'dead']].sort());
    // Once the waiting job is delivered, its event has no keeper left (its two attempts go with it).
    goneAnswers410 = false;
    await rig.admin('PATCH', `/admin/v1/webhooks/${gone.id}`, { enabled: true });
    await settled();
    clock.advance(STEP_MS);
    expect(await prunePass(rig.ctx)).toEqual({ delivery_jobs: 2, delivery_attempts: 3, events: 2 });
    expect(await states()).toEqual([]);
    // The newest feed event always stays (SQLite numbers the next position from it).
    expect(await count('events')).toBe(1);
    expect((await feed('?limit=100')).json().items.map((e: any) => e.topic)).toEqual(['delivery.dead']);
    expect(rec0.id).not.toBe(rec1.id);
  });

  it('works in bounded batches, and row counts stay bounded while deliveries run', async () => {
    await start();
    await make('ok', '/ok');
    const batches: Array<Partial<PruneCounts>> = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 5; i++) await rig.createRecord({ title: `r${round}.${i}` });
      await settled();
      clock.advance(STEP_MS);
      await prunePass(rig.ctx, { batchSize: 2, onBatch: (b) => batches.push(b) });
      // Only the newest feed event outlives its round: every job and attempt of the round is gone.
      expect(await count('delivery_jobs')).toBe(0);
      expect(await count('delivery_attempts')).toBe(0);
      expect(await count('events')).toBe(1);
    }
    const sizes = batches.map((b) => (b.delivery_jobs ?? 0) + (b.events ?? 0));
    expect(Math.max(...sizes)).toBe(2);
    expect(batches.every((b) => (b.delivery_jobs ?? 0) <= 2 && (b.events ?? 0) <= 2)).toBe(true);
    expect(batches.length).toBeGreaterThanOrEqual(4 * 6);
  });

  it('svc prune --dry-run prints what it would remove and removes nothing; svc prune removes it', async () => {
    await start();
    const target = await make('ok', '/ok');
    // The command reads the real clock: rows made an hour before it, as they would be stored (ids carry their time).
    const { db } = rig.ctx.database;
    const old = Date.now() - 3_600_000;
    for (const n of [1, 2]) {
      const eventId = `${idFloor('evt', old)}${'0'.repeat(15)}${n}`;
      const jobId = `${idFloor('del', old)}${'0'.repeat(15)}${n}`;
      await db.insertInto('events').values({ id: eventId, topic: 'record.created', collection: 'issues', record_id: `rec_${n}`, payload: '{}', created_at: old, tx: null, position: null }).execute();
      await db.insertInto('delivery_jobs').values({
        id: jobId, webhook_id: target.id, event_id: eventId, topic: 'record.created', collection: 'issues', record_id: `rec_${n}`, state: 'delivered',
        attempt_count: 1, round_start: 0, next_attempt_at: old, lease_id: null, lease_expires_at: null, last_error_code: null, last_error_message: null,
        created_at: old, updated_at: old,
      }).execute();
      await db.insertInto('delivery_attempts').values({ job_id: jobId, number: 1, started_at: old, duration_ms: 5, status_code: 200, error_code: null, error_message: null, response_snippet: 'ok' }).execute();
    }
    const env = { SVC_DATABASE_URL: rig.ctx.config.databaseUrl, SVC_SECRET_KEY: rig.ctx.config.secretKey!, SVC_LOG_LEVEL: 'warn', ...RETENTION };
    const before = [await count('delivery_jobs'), await count('delivery_attempts'), await count('events')];
    expect(before).toEqual([2, 2, 2]);
    const dry = await svc(['prune', '--dry-run'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe('delivery_jobs: 2 would be removed\ndelivery_attempts: 2 would be removed\nevents: 2 would be removed\n');
    expect([await count('delivery_jobs'), await count('delivery_attempts'), await count('events')]).toEqual(before);
    const real = await svc(['prune'], env);
    expect(real.stdout).toBe('delivery_jobs: 2 removed\ndelivery_attempts: 2 removed\nevents: 2 removed\n');
    expect([await count('delivery_jobs'), await count('delivery_attempts'), await count('events')]).toEqual([0, 0, 0]);
  }, 120_000);
});

