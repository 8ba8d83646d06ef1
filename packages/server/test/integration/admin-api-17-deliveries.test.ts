import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The manual clock runs a day ahead, on a whole minute: ids are made at the clock's time only when it is past every
 * id this process made before (lib/ids.ts), and `until` takes ids' time within a minute of `createdAt` (jobs-store.ts).
 */
const T = Math.ceil(Date.now() / 60_000) * 60_000 + 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * SPEC §17, the deliveries side: the list's new filters (each compared with the same filter applied to the whole
 * list), `heldBy`, the bulk retry, and an event with its jobs. Jobs are made through the API: records written to
 * targets of a real receiver, on a manual clock where times matter.
 */
describe.each(DIALECTS)('admin API: deliveries and events (SPEC §17) (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  const get = async (url: string) => {
    const res = await rig.admin('GET', url);
    return { status: res.statusCode, body: res.json() };
  };
  const list = async (query: string): Promise<any[]> => {
    const res = await get(`/admin/v1/deliveries?limit=500&${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.items;
  };
  const write = (method: 'PATCH' | 'DELETE', id: string, data?: unknown) =>
    rig.app.inject({ method, url: `/api/v1/collections/issues/records/${id}`, headers: rig.auth, payload: data === undefined ? undefined : { data } });
  /** The event ids of the admin feed, oldest first, with their record and topic. */
  const events = async (count: number): Promise<Array<{ id: string; recordId: string; topic: string }>> => {
    let items: any[] = [];
    await waitFor(async () => (items = (await get('/admin/v1/events?limit=1000')).body.items).length >= count, `${count} events`);
    return items;
  };

  it('filters by record, event, topic (repeatable) and creation time, each as the whole list filtered says; cursors page within a filter', async () => {
    const clock = new ManualClock(T);
    rig = await createDeliveryRig(dialect, {}, { clock, startWorker: false });
    const all = await rig.target(['record.created', 'record.updated', 'record.deleted']);
    const created = await rig.target(['record.created']);
    const r1 = await rig.createRecord({ title: 'one' });
    clock.advance(1000);
    const r2 = await rig.createRecord({ title: 'two' });
    clock.advance(1000);
    expect((await write('PATCH', r1.id, { title: 'one, again' })).statusCode).toBe(200);
    clock.advance(1000);
    expect((await write('DELETE', r2.id)).statusCode).toBe(204);
    const everything = await list('');
    // r1 and r2 created (both targets), r1 updated, r2 deleted (the first target alone): newest first.
    expect(everything.map((j) => [j.recordId, j.topic])).toEqual([
      [r2.id, 'record.deleted'],
      [r1.id, 'record.updated'],
      [r2.id, 'record.created'],
      [r2.id, 'record.created'],
      [r1.id, 'record.created'],
      [r1.id, 'record.created'],
    ]);
    const ids = (jobs: any[]) => jobs.map((j) => j.id);
    const where = (keep: (j: any) => boolean) => ids(everything.filter(keep));

    expect(ids(await list(`recordId=${r1.id}`))).toEqual(where((j) => j.recordId === r1.id));
    expect(ids(await list(`recordId=${r1.id}&webhookId=${created.id}`))).toEqual(where((j) => j.recordId === r1.id && j.webhookId === created.id));
    expect(ids(await list('topic=record.created'))).toEqual(where((j) => j.topic === 'record.created'));
    expect(ids(await list('topic=record.updated&topic=record.deleted'))).toEqual(where((j) => j.topic !== 'record.created'));
    expect(await list('topic=webhook.test')).toEqual([]);
    expect(ids(await list(`recordId=${r2.id}&topic=record.deleted&webhookId=${all.id}`))).toEqual([everything[0].id]);

    const feed = await events(4);
    const r1Created = feed.find((e) => e.recordId === r1.id && e.topic === 'record.created')!;
    expect(ids(await list(`eventId=${r1Created.id}`))).toEqual(where((j) => j.recordId === r1.id && j.topic === 'record.created'));
    expect(await list(`eventId=evt_${'0'.repeat(26)}`)).toEqual([]);

    // Inclusive bounds on createdAt, to the millisecond.
    expect(ids(await list(`since=${iso(T + 1000)}`))).toEqual(where((j) => Date.parse(j.createdAt) >= T + 1000));
    expect(ids(await list(`until=${iso(T + 1000)}`))).toEqual(where((j) => Date.parse(j.createdAt) <= T + 1000));
    expect(ids(await list(`since=${iso(T + 1000)}&until=${iso(T + 2000)}`))).toEqual(where((j) => j.createdAt === iso(T + 1000) || j.createdAt === iso(T + 2000)));
    expect(ids(await list(`since=${iso(T + 1001)}&until=${iso(T + 1999)}`))).toEqual([]);
    // Another offset is the same instant.
    const plusTwo = new Date(T + 2000 + 7_200_000).toISOString().replace('Z', '+02:00');
    expect(ids(await list(`since=${encodeURIComponent(plusTwo)}`))).toEqual(where((j) => Date.parse(j.createdAt) >= T + 2000));

    // Paging one job at a time through a filter returns exactly the filtered list.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: any[]; nextCursor: string | null } } = await get(`/admin/v1/deliveries?limit=1&topic=record.created${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...ids(page.body.items));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(where((j) => j.topic === 'record.created'));
  });

  it.each([
    ['recordId', 'recordId=evt_00000000000000000000000000'],
    ['recordId', 'recordId=rec_short'],
    ['eventId', 'eventId=rec_00000000000000000000000000'],
    ['topic', 'topic=record.created&topic=record.exploded'],
    ['since', 'since=yesterday'],
    ['since', 'since=2026-06-01'],
    ['until', 'until=2026-06-01T12:00:00'],
    ['until', 'until=2026-06-30T23:59:60Z'],
    ['unknown', 'colour=red'],
  ])('an unknown or malformed %s is invalid_query', async (_what, query) => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const res = await get(`/admin/v1/deliveries?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_query');
  });

  it('a pending job of a disabled target shows heldBy target_disabled, in the list, the job and its event; null again once enabled', async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const off = await rig.target(['record.created']);
    const on = await rig.target(['record.created']);
    const record = await rig.createRecord({ title: 'waits' });
    expect((await rig.admin('PATCH', `/admin/v1/webhooks/${off.id}`, { enabled: false })).statusCode).toBe(200);
    const jobs = await list(`recordId=${record.id}`);
    expect(jobs.map((j) => [j.webhookId, j.state, j.heldBy])).toEqual([
      [on.id, 'pending', null],
      [off.id, 'pending', 'target_disabled'],
    ]);
    const held = jobs[1];
    expect((await rig.job(held.id)).heldBy).toBe('target_disabled');
    const [event] = await events(1);
    expect((await get(`/admin/v1/events/${event!.id}`)).body.deliveries.map((j: any) => j.heldBy)).toEqual(['target_disabled', null]);
    expect((await rig.admin('PATCH', `/admin/v1/webhooks/${off.id}`, { enabled: true })).statusCode).toBe(200);
    expect((await rig.job(held.id)).heldBy).toBeNull();
  });

  it('bulk retry sends the dead jobs back for a full round and says why it skipped each other one', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s' }, { startWorker: false });
    rig.receiver.setHandler((_req, res) => res.writeHead(500).end());
    const failing = await rig.target(['record.created']);
    const doomed = await rig.target(['record.created']);
    const first = await rig.createRecord({ title: 'a' });
    await rig.createRecord({ title: 'b' });
    await rig.worker.start();
    await waitFor(async () => (await list('state=dead')).length === 4, 'four dead jobs');
    await rig.worker.stop(1000);
    // A job that is not dead: the failing target's, for a record written while nothing delivers.
    const third = await rig.createRecord({ title: 'c' });
    expect((await rig.admin('DELETE', `/admin/v1/webhooks/${doomed.id}`)).statusCode).toBe(204);
    const [deadA, deadB] = (await list(`webhookId=${failing.id}&state=dead`)).map((j) => j.id);
    const [orphan] = (await list(`webhookId=${doomed.id}&recordId=${first.id}`)).map((j) => j.id);
    const [pending] = (await list(`webhookId=${failing.id}&recordId=${third.id}`)).map((j) => j.id);
    const unknown = `del_${'0'.repeat(26)}`;
    const before = { orphan: await rig.job(orphan), pending: await rig.job(pending) };

    const res = await rig.admin('POST', '/admin/v1/deliveries/retry', { ids: [deadA, pending, deadB, orphan, unknown, deadA] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      retried: 2,
      skipped: [
        { id: pending, reason: 'not_dead' },
        { id: orphan, reason: 'target_deleted' },
        { id: unknown, reason: 'not_found' },
      ],
    });
    // As a single retry does: pending again, due after the first delay, the numbering going on.
    for (const id of [deadA, deadB]) expect(await rig.job(id)).toMatchObject({ state: 'pending', attemptCount: 1, heldBy: null });
    expect(await rig.job(orphan)).toEqual(before.orphan);
    expect(await rig.job(pending)).toEqual(before.pending);
    rig.receiver.setHandler((_req, res) => res.writeHead(204).end());
    await rig.worker.start();
    await waitFor(async () => (await rig.job(deadA)).state === 'delivered' && (await rig.job(deadB)).state === 'delivered', 'the retried jobs delivered');
    expect((await rig.job(deadA)).attempts.map((a: any) => a.number)).toEqual([1, 2]);
  });

  it('bulk retry takes 1 to 100 well-formed ids', async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const post = (payload: unknown) => rig.admin('POST', '/admin/v1/deliveries/retry', payload);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `del_${String(i).padStart(26, '0')}`);
    expect((await post({ ids: [] })).json().code).toBe('validation_failed');
    expect((await post({ ids: ids(101) })).statusCode).toBe(422);
    const malformed = (await post({ ids: ['del_1'] })).json();
    expect(malformed).toMatchObject({ code: 'validation_failed', errors: [{ path: '/ids/0' }] });
    expect((await post({ ids: ids(1), also: true })).statusCode).toBe(422);
    expect((await post({ ids: ids(100) })).json()).toMatchObject({ retried: 0, skipped: expect.arrayContaining([{ id: ids(100)[99], reason: 'not_found' }]) });
    const anonymous = await rig.app.inject({ method: 'POST', url: '/admin/v1/deliveries/retry', payload: { ids: ids(1) } });
    expect(anonymous.statusCode).toBe(401);
  });

  it('GET /admin/v1/events/{id}: the event byte for byte as the feed sends it, and its jobs as the list shows them, oldest first', async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const a = await rig.target(['record.created', 'record.updated']);
    const b = await rig.target(['record.updated']);
    const record = await rig.createRecord({ title: 'ünïcode "quoted" \u2028 </script>' });
    expect((await write('PATCH', record.id, { title: 'y' })).statusCode).toBe(200);
    const feed = await events(2);
    const updated = feed.find((e) => e.topic === 'record.updated')!;
    const res = await rig.admin('GET', `/admin/v1/events/${updated.id}`);
    expect(res.statusCode).toBe(200);
    const { deliveries, ...event } = res.json();
    expect(event).toEqual(updated);
    expect(deliveries).toEqual([...(await list(`eventId=${updated.id}`))].reverse());
    expect(deliveries.map((j: any) => j.webhookId)).toEqual([a.id, b.id]);
    // The event's JSON is the feed's text exactly (the stored payload, not parsed and written again), then its jobs.
    const text = (res as unknown as { body: string }).body;
    const feedText = (await rig.admin('GET', '/admin/v1/events?limit=1000') as unknown as { body: string }).body;
    expect(feedText).toContain(`${text.slice(0, text.indexOf(',"deliveries":'))}}`);

    expect((await get(`/admin/v1/events/evt_${'0'.repeat(26)}`)).status).toBe(404);
    expect((await get('/admin/v1/events/evt_nope')).status).toBe(404);
    expect((await get('/admin/v1/events/stream')).status).not.toBe(200);
    // A test delivery's event is not in the feed: there is no such event to show.
    const test = await rig.admin('POST', `/admin/v1/webhooks/${a.id}/test`);
    const row = await rig.ctx.database.db.selectFrom('delivery_jobs').select('event_id').where('id', '=', test.json().deliveryId).executeTakeFirstOrThrow();
    expect((await get(`/admin/v1/events/${row.event_id}`)).body.code).toBe('not_found');
    const anonymous = await rig.app.inject({ method: 'GET', url: `/admin/v1/events/${updated.id}` });
    expect(anonymous.statusCode).toBe(401);
  });
});
