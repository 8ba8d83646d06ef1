import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

describe.each(DIALECTS)('GET /api/v1/events (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  const feed = async (query: string, token?: string) => {
    const res = await rig.app.inject({ method: 'GET', url: `/api/v1/events${query}`, headers: { authorization: `Bearer ${token ?? (await feedToken())}` } });
    return { status: res.statusCode, body: res.json() };
  };
  /** Reads until at least `count` events are visible (a page read right after the commits may be a moment early). */
  const feedUntil = async (query: string, count: number) => {
    let page = await feed(query);
    await waitFor(async () => (page = await feed(query)).body.items?.length >= count, `${count} events in the feed`);
    return page;
  };
  let cachedToken: string | null = null;
  const feedToken = async () => (cachedToken ??= await rig.token(['records:read', 'events:read']));
  const write = (method: 'POST' | 'PATCH' | 'DELETE', url: string, data?: unknown) =>
    rig.app.inject({ method, url, headers: rig.auth, payload: data === undefined ? undefined : { data } });

  it('lists every committed change in one order, with the webhooks\' payload and event id; resuming reads only newer ones', async () => {
    cachedToken = null;
    rig = await createDeliveryRig(dialect);
    await rig.target(['record.created', 'record.updated', 'record.deleted']);
    const a = await rig.createRecord({ title: 'a' });
    await write('PATCH', `/api/v1/collections/issues/records/${a.id}`, { title: 'b' });
    await write('DELETE', `/api/v1/collections/issues/records/${a.id}`);
    // On PostgreSQL an event waits above the horizon while an older transaction is still running (docs/event-feed.md):
    // a delivery's completion, say. Committed is not yet readable for those few milliseconds, so read until it is.
    const first = await feedUntil('', 3);
    expect(first.status).toBe(200);
    expect(first.body.items.map((e: any) => e.topic)).toEqual(['record.created', 'record.updated', 'record.deleted']);
    for (const e of first.body.items) {
      expect(Object.keys(e)).toEqual(['id', 'topic', 'collection', 'recordId', 'occurredAt', 'payload']);
      expect(e).toMatchObject({ collection: 'issues', recordId: a.id });
      expect(e.id).toMatch(/^evt_/);
      expect(e.payload.eventId).toBe(e.id);
      expect(e.payload.occurredAt).toBe(e.occurredAt);
    }
    expect(first.body.items[1].payload.previous.data).toEqual({ title: 'a' });
    expect(typeof first.body.nextCursor).toBe('string');
    // The deliveries carry the same payload, byte for byte, event id included.
    await waitFor(() => rig.receiver.requests.length === 3, 'three deliveries');
    const delivered = rig.receiver.requests.map((r) => JSON.parse(r.body).payload).sort((x, y) => x.eventId.localeCompare(y.eventId));
    expect(delivered).toEqual(first.body.items.map((e: any) => e.payload).sort((x: any, y: any) => x.eventId.localeCompare(y.eventId)));
    // Resuming from the cursor: nothing old, then exactly the new event.
    const again = await feed(`?after=${first.body.nextCursor}`);
    expect(again.body.items).toEqual([]);
    expect(again.body.nextCursor).toBe(first.body.nextCursor);
    const b = await rig.createRecord({ title: 'c' });
    const next = await feedUntil(`?after=${first.body.nextCursor}`, 1);
    expect(next.body.items.map((e: any) => e.recordId)).toEqual([b.id]);
  });

  it('pages by limit; filters skip events but the cursor moves past them; after=now starts at the present', async () => {
    cachedToken = null;
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    await rig.collection('notes', [{ name: 'title', type: 'text' }]);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await rig.createRecord({ title: `t${i}` })).id);
    await write('POST', '/api/v1/collections/notes/records', { title: 'n' });
    const p1 = await feed('?limit=2');
    const p2 = await feed(`?limit=2&after=${p1.body.nextCursor}`);
    const p3 = await feed(`?limit=2&after=${p2.body.nextCursor}`);
    expect([...p1.body.items, ...p2.body.items, ...p3.body.items].map((e: any) => e.recordId).slice(0, 5)).toEqual(ids);
    // Only notes: the five issues events are examined and skipped; the cursor is past all six.
    const notes = await feed('?collection=notes');
    expect(notes.body.items.map((e: any) => e.collection)).toEqual(['notes']);
    const none = await feed(`?collection=issues&after=${notes.body.nextCursor}`);
    expect(none.body.items).toEqual([]);
    const updated = await feed('?topic=record.updated');
    expect(updated.body.items).toEqual([]);
    const fromNow = await feed('?after=now');
    expect(fromNow.body.items).toEqual([]);
    const later = await rig.createRecord({ title: 'later' });
    expect((await feed(`?after=${fromNow.body.nextCursor}`)).body.items.map((e: any) => e.recordId)).toEqual([later.id]);
    const forged = await feed('?after=forged');
    expect(forged.status).toBe(400);
    expect(forged.body).toMatchObject({ code: 'invalid_query', errors: [{ path: 'after' }] });
    expect((await feed('?limit=1001')).status).toBe(400);
  });

  it('needs events:read; a token limited to some collections sees only their events, and naming another is 403', async () => {
    cachedToken = null;
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    await rig.collection('notes', [{ name: 'title', type: 'text' }]);
    await rig.createRecord({ title: 'i' });
    await write('POST', '/api/v1/collections/notes/records', { title: 'n' });
    expect((await feed('', await rig.token(['records:read']))).status).toBe(403);
    const notesOnly = await rig.token(['events:read'], ['notes']);
    const seen = await feed('', notesOnly);
    expect(seen.body.items.map((e: any) => e.collection)).toEqual(['notes']);
    expect((await feed('?collection=issues', notesOnly)).status).toBe(403);
    // A collection that does not exist is 403 for a token of every collection too (SPEC §3).
    expect((await feed('?collection=nope')).status).toBe(403);
    expect((await feed('?collection=notes&collection=nope')).status).toBe(403);
    expect((await feed('?collection=notes')).status).toBe(200);
    const res = await rig.app.inject({ method: 'GET', url: '/api/v1/events' });
    expect(res.statusCode).toBe(401);
  });

  it('builds an older event\'s JSON (no stored prefix) in the database exactly as JSON.stringify would: milliseconds padded, UTC, payload as stored', async () => {
    cachedToken = null;
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const created = [await rig.createRecord({ title: 'a "quoted" \\ title\n' }), await rig.createRecord({ title: 'ünïcødé ✓' })];
    const { db } = rig.ctx.database;
    // 1 ms after the epoch's second, and the last millisecond of a leap day: the padding and the calendar.
    const times = [1_700_000_000_001, 1_709_251_199_999];
    // Events written before migration 012 have no stored prefix: the database builds the whole JSON.
    for (const [i, r] of created.entries()) await db.updateTable('events').set({ created_at: times[i]!, json_prefix: null }).where('record_id', '=', r.id).execute();
    const res = await rig.app.inject({ method: 'GET', url: '/api/v1/events', headers: { authorization: `Bearer ${await feedToken()}` } });
    const rows = await db.selectFrom('events').select(['id', 'topic', 'collection', 'record_id', 'created_at', 'payload']).where('position', 'is not', null).orderBy('position').execute();
    const expected = rows.map(
      (r) => `{"id":${JSON.stringify(r.id)},"topic":${JSON.stringify(r.topic)},"collection":${JSON.stringify(r.collection)},"recordId":${JSON.stringify(r.record_id)},"occurredAt":${JSON.stringify(new Date(Number(r.created_at)).toISOString())},"payload":${r.payload}}`,
    );
    expect(res.body.startsWith(`{"items":[${expected.join(',')}],"nextCursor":`), res.body.slice(0, 400)).toBe(true);
    expect(res.json().items.map((e: any) => e.occurredAt)).toEqual(['2023-11-14T22:13:20.001Z', '2024-02-29T23:59:59.999Z']);
  });

  it('refuses a cursor it did not issue: beyond the head, negative, or with a member more', async () => {
    cachedToken = null;
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const empty = await feed('');
    expect(empty.status).toBe(200);
    expect((await feed(`?after=${empty.body.nextCursor}`)).status).toBe(200); // an empty feed's head
    await rig.createRecord({ title: 'a' });
    const head = (await feed('')).body.nextCursor as string;
    expect((await feed(`?after=${head}`)).status).toBe(200);
    const [tx, position] = (JSON.parse(Buffer.from(head, 'base64url').toString()).after as string).split('.').map(Number) as [number, number];
    const cursor = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const forged of [{ after: `${tx}.${position + 1}` }, { after: `${tx + 1}.0` }, { after: '0.-5' }, { after: '-2.-1' }, { after: `${tx}.${position}`, x: 1 }]) {
      const res = await feed(`?after=${cursor(forged)}`);
      expect(res.status, JSON.stringify(forged)).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_query', errors: [{ path: 'after' }] });
    }
  });

  it('wait= long-polls until a matching event commits', async () => {
    cachedToken = null;
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const start = await feed('?after=now');
    const t0 = Date.now();
    const pending = feed(`?after=${start.body.nextCursor}&wait=10`);
    await new Promise((r) => setTimeout(r, 300));
    const rec = await rig.createRecord({ title: 'awaited' });
    const got = await pending;
    expect(got.body.items.map((e: any) => e.recordId)).toEqual([rec.id]);
    expect(Date.now() - t0).toBeLessThan(5000);
    // Nothing new: the wait runs out and the page is empty, its cursor where it was.
    const t1 = Date.now();
    const empty = await feed(`?after=${got.body.nextCursor}&wait=1`);
    expect(empty.body.items).toEqual([]);
    expect(Date.now() - t1).toBeGreaterThanOrEqual(900);
  });

  it('a cursor older than what is retained is 410 cursor_expired; the admin twin reads every collection', async () => {
    cachedToken = null;
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    await rig.collection('notes', [{ name: 'title', type: 'text' }]);
    await rig.createRecord({ title: 'i' });
    const old = (await feed('')).body.nextCursor;
    await write('POST', '/api/v1/collections/notes/records', { title: 'n' });
    const head = (await feed('')).body.nextCursor;
    const admin = await rig.admin('GET', '/admin/v1/events?limit=10');
    expect(admin.statusCode).toBe(200);
    expect(admin.json().items.map((e: any) => e.collection)).toEqual(['issues', 'notes']);
    // Stands in for retention (see retention.test.ts): it records the highest position it pruned, here the second event.
    const [tx, position] = JSON.parse(Buffer.from(head, 'base64url').toString()).after.split('.');
    await rig.ctx.database.db.insertInto('svc_meta').values({ key: 'feed_pruned_through', value: `${tx}.${position}` }).execute();
    const expired = await feed(`?after=${old}`);
    expect(expired.status).toBe(410);
    expect(expired.body.code).toBe('cursor_expired');
    expect((await feed(`?after=${head}`)).status).toBe(200);
    expect((await feed('?after=now')).status).toBe(200);

    // A read without a cursor starts after the horizon.
    expect((await rig.admin('GET', '/admin/v1/events?limit=10')).json().items).toEqual([]);
    const unauthenticated = await rig.app.inject({ method: 'GET', url: '/admin/v1/events' });
    expect(unauthenticated.statusCode).toBe(401);
  });
});
