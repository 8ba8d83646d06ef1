import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFeedCursor } from '../../src/events/feed.js';
import type { TestApp } from '../helpers/app.js';
import { startFeedApp, type FeedApp } from '../helpers/feed-app.js';
import { DIALECTS } from '../helpers/db.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const FAST = { pingMs: 100, recheckMs: 100 };

describe.each(DIALECTS)('GET /api/v1/events/stream (%s)', (dialect) => {
  let t: TestApp;
  let base: string;
  let writer: Record<string, string>;
  const clients: SseClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await t?.close();
  });

  let f: FeedApp;
  const start = async (env: Record<string, string> = {}, streamTiming = FAST) => {
    f = await startFeedApp(dialect, { env, collections: ['issues', 'notes'], streamTiming });
    ({ t, base, writer } = f);
  };
  const write = (collection: string, title: string) => f.create(collection, { title });
  const stream = async (token: string, query = '', headers: Record<string, string> = {}) => {
    const c = await openSse(`${base}/api/v1/events/stream${query}`, { authorization: `Bearer ${token}`, ...headers });
    clients.push(c);
    return c;
  };
  const reader = () => t.token(['events:read']);
  const ids = (c: SseClient) => c.events().map((f) => JSON.parse(f.data!).recordId);

  it('starts with retry, then sends each event live as id/event/data; pings; filters; needs Accept and events:read', async () => {
    await start();
    const token = await reader();
    const before = await write('issues', 'before');
    const all = await stream(token);
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(all.headers.get('x-request-id')).toBeTruthy();
    const notes = await stream(token, '?collection=notes');
    const updates = await stream(token, '?topic=record.updated');
    const a = await write('issues', 'a');
    const n = await write('notes', 'n');
    await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${a}`, headers: writer, payload: { data: { title: 'a2' } } });
    await waitFor(() => all.events().length === 3, 'three events');
    await waitFor(() => notes.events().length === 1 && updates.events().length === 1, 'filtered events');
    expect(all.frames[0]).toEqual({ retry: '2000' });
    expect(ids(all)).toEqual([a, n, a]);
    expect(ids(all)).not.toContain(before);
    const [first] = all.events();
    expect(first!.event).toBe('record.created');
    const event = JSON.parse(first!.data!);
    expect(Object.keys(event)).toEqual(['id', 'topic', 'collection', 'recordId', 'occurredAt', 'payload']);
    // Its id is a feed cursor: the pull feed from it starts right after this event.
    const page = (await t.app.inject({ method: 'GET', url: `/api/v1/events?after=${first!.id}`, headers: { authorization: `Bearer ${token}` } })).json();
    expect(page.items.map((e: any) => e.recordId)).toEqual([n, a]);
    expect(ids(notes)).toEqual([n]);
    expect(updates.events().map((f) => f.event)).toEqual(['record.updated']);
    await waitFor(() => all.frames.some((f) => f.comment === 'ping'), 'a ping');

    const plain = await stream(token, '', { accept: 'application/json' });
    expect(plain.status).toBe(406);
    expect(JSON.parse(plain.body).code).toBe('not_acceptable');
    expect((await stream(await t.token(['records:read']))).status).toBe(403);
    const limited = await t.token(['events:read'], ['notes']);
    expect((await stream(limited, '?collection=issues')).status).toBe(403);
    const noToken = await openSse(`${base}/api/v1/events/stream`, {});
    expect(noToken.status).toBe(401);
    // The token goes in a header only; an after= that svc did not issue is invalid_query.
    const forged = await stream(token, '?after=forged');
    expect(forged.status).toBe(400);
  });

  it('the events of one transaction reach each stream together, a filtered stream only its own, in feed order', async () => {
    await start();
    const token = await reader();
    const all = await stream(token);
    const notes = await stream(token, '?collection=notes');
    const updates = await stream(token, '?topic=record.updated');
    const a = await write('issues', 'a');
    // One commit: the shared reader gets these four events in one read, and each stream takes its part of it.
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/batch',
      headers: writer,
      payload: {
        operations: [
          { method: 'POST', collection: 'notes', data: { title: 'n1' } },
          { method: 'PATCH', collection: 'issues', id: a, data: { title: 'a2' }, ifMatch: 1 },
          { method: 'POST', collection: 'issues', data: { title: 'b' } },
          { method: 'POST', collection: 'notes', data: { title: 'n2' } },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const [n1, , b, n2] = res.json().results.map((r: { record: { id: string } }) => r.record.id);
    await waitFor(() => all.events().length === 5 && notes.events().length === 2 && updates.events().length === 1, 'the batch on every stream');
    expect(ids(all)).toEqual([a, n1, a, b, n2]);
    expect(ids(notes)).toEqual([n1, n2]);
    expect(ids(updates)).toEqual([a]);
    // Each frame is whole and its id resumes right after it.
    const third = all.events()[2]!;
    const rest = (await t.app.inject({ method: 'GET', url: `/api/v1/events?after=${third.id}`, headers: { authorization: `Bearer ${token}` } })).json();
    expect(rest.items.map((e: { recordId: string }) => e.recordId)).toEqual([b, n2]);
    // Nothing more came, and nothing twice: a last event every stream takes (an update of a note) arrives after
    // anything the batch could still have sent, and each stream holds exactly what it should before it.
    await f.update('notes', n2, { title: 'n2 again' });
    await waitFor(() => [all, notes, updates].every((c) => ids(c).at(-1) === n2 && c.events().at(-1)!.event === 'record.updated'), 'the last event on every stream');
    expect(ids(all)).toEqual([a, n1, a, b, n2, n2]);
    expect(ids(notes)).toEqual([n1, n2, n2]);
    expect(ids(updates)).toEqual([a, n2]);
  });

  it('replays what was missed from Last-Event-ID (which wins over after), then goes on live', async () => {
    await start();
    const token = await reader();
    const written = [];
    for (let i = 0; i < 3; i++) written.push(await write('issues', `t${i}`));
    const feed = (await t.app.inject({ method: 'GET', url: '/api/v1/events?limit=1', headers: { authorization: `Bearer ${token}` } })).json();
    const c = await stream(token, '?after=now', { 'last-event-id': feed.nextCursor });
    await waitFor(() => c.events().length === 2, 'the two missed events');
    const live = await write('issues', 'live');
    await waitFor(() => c.events().length === 3, 'the live event');
    expect(ids(c)).toEqual([written[1], written[2], live]);
    const fromAfter = await stream(token, `?after=${feed.nextCursor}`);
    await waitFor(() => fromAfter.events().length === 3, 'replay from after=');
    expect(ids(fromAfter)).toEqual([written[1], written[2], live]);
    const bad = await stream(token, '', { 'last-event-id': 'nope' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).errors[0].path).toBe('Last-Event-ID');
  });

  it('many clients, joining live and from the past while writes go on, each get every event exactly once', async () => {
    await start();
    const token = await reader();
    const writes: Promise<string>[] = [];
    const clientsLive: SseClient[] = [];
    const origin = (await t.app.inject({ method: 'GET', url: '/api/v1/events?after=now', headers: { authorization: `Bearer ${token}` } })).json().nextCursor;
    for (let i = 0; i < 8; i++) clientsLive.push(await stream(token));
    const writing = (async () => {
      for (let i = 0; i < 60; i++) writes.push(Promise.resolve(await write(i % 2 ? 'issues' : 'notes', `w${i}`)));
    })();
    // Catching up from the start while the live reader runs: the hand-over must lose and repeat nothing.
    const late: SseClient[] = [];
    for (let i = 0; i < 6; i++) {
      // Each joins after some more writes than the one before, while the writes go on.
      await waitFor(() => writes.length >= 8 * (i + 1), `write ${8 * (i + 1)}`);
      late.push(await openSse(`${base}/api/v1/events/stream`, { authorization: `Bearer ${await reader()}`, 'last-event-id': origin }));
    }
    clients.push(...late);
    await writing;
    const all = await Promise.all(writes);
    for (const c of late) {
      await waitFor(() => c.events().length >= all.length, 'every event for a late client');
      expect(ids(c)).toEqual(all);
    }
    for (const c of clientsLive) {
      await waitFor(() => c.events().length >= all.length, 'every event for a live client');
      expect(ids(c)).toEqual(all);
    }
    // Nothing after them either: one more event reaches every client next, with no repeat of an earlier one before it.
    const last = await write('issues', 'last');
    for (const c of [...late, ...clientsLive]) {
      await waitFor(() => ids(c).includes(last), 'the last event on every client');
      expect(ids(c)).toEqual([...all, last]);
    }
    // 61 writes and 14 streams: 10 s on a quiet machine, past 30 s at a load of 25.
  }, 90_000);

  it('at most SVC_STREAMS_PER_TOKEN streams per token: rate_limited beyond, and a closed one frees its place', async () => {
    await start({ SVC_STREAMS_PER_TOKEN: '2' });
    const token = await reader();
    const one = await stream(token);
    await stream(token);
    const third = await stream(token);
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body).code).toBe('rate_limited');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await stream(await reader())).status).toBe(200);
    one.close();
    await waitFor(async () => {
      const again = await stream(token);
      return again.status === 200;
    }, 'a free place');
  });

  it('an expired position, or a revoked token, ends the stream with event: error', async () => {
    await start();
    const token = await reader();
    await write('issues', 'a');
    const old = (await t.app.inject({ method: 'GET', url: '/api/v1/events', headers: { authorization: `Bearer ${token}` } })).json().nextCursor;
    await write('issues', 'b');
    const head = (await t.app.inject({ method: 'GET', url: '/api/v1/events', headers: { authorization: `Bearer ${token}` } })).json().nextCursor;
    const [tx, position] = JSON.parse(Buffer.from(head, 'base64url').toString()).after.split('.');
    await t.ctx.database.db.insertInto('svc_meta').values({ key: 'feed_pruned_through', value: `${tx}.${position}` }).execute();
    const expired = await stream(token, '', { 'last-event-id': old });
    expect(expired.status).toBe(200);
    await expired.ended;
    const error = expired.events().at(-1)!;
    expect(error.event).toBe('error');
    expect(JSON.parse(error.data!)).toMatchObject({ code: 'cursor_expired', status: 410 });

    // A position beyond the newest event was never handed out: refused before any byte of a stream (SPEC §12), not a
    // stream that skips every event up to it.
    const madeUp = Buffer.from(JSON.stringify({ after: `${tx}.${Number(position) + 1000}` })).toString('base64url');
    for (const [query, headers, path] of [['', { 'last-event-id': madeUp }, 'Last-Event-ID'], [`?after=${madeUp}`, {}, 'after']] as const) {
      const beyond = await stream(token, query, headers);
      expect(beyond.status).toBe(400);
      expect(beyond.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(beyond.body)).toMatchObject({ code: 'invalid_query', errors: [{ path }] });
    }

    const created = (await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: t.admin.headers, payload: { name: 'r', scopes: ['events:read'], collections: null } })).json();
    const revoked = await stream(created.token);
    expect(revoked.status).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/admin/v1/tokens/${created.id}`, headers: t.admin.headers })).statusCode).toBe(204);
    await revoked.ended;
    expect(revoked.events().at(-1)).toMatchObject({ event: 'error' });
    expect(JSON.parse(revoked.events().at(-1)!.data!).code).toBe('unauthorized');
  });

  // On PostgreSQL the head can move back a little (feed.ts, refuseUnissued): a transaction of another database that
  // ends between a read's snapshot and its look at pg_stat_activity holds that read's horizon below an earlier one's.
  // An open transaction of this database holds the head below an event the same way, deterministically: a cursor
  // at that event (one handed out before the head moved back) is still one this service issued.
  it.runIf(dialect === 'postgres')('a cursor at the newest event holds while the head stands below it; beyond the newest it does not', async () => {
    await start();
    const token = await reader();
    await write('issues', 'a');
    let release!: () => void;
    let began!: () => void;
    const started = new Promise<void>((r) => (began = r));
    const holding = t.ctx.database.db.transaction().execute(async (trx) => {
      await sql`select pg_current_xact_id()`.execute(trx);
      began();
      await new Promise<void>((r) => (release = r));
    });
    try {
      await started;
      const b = await write('issues', 'b');
      const row = await t.ctx.database.db.selectFrom('events').select(['tx', 'position']).where('record_id', '=', b).executeTakeFirstOrThrow();
      const newest = { tx: Number(row.tx), position: Number(row.position) };
      const feed = (after: string) => t.app.inject({ method: 'GET', url: `/api/v1/events?after=${after}`, headers: { authorization: `Bearer ${token}` } });
      const head = JSON.parse(Buffer.from((await feed('now')).json().nextCursor, 'base64url').toString()).after as string;
      expect(head, 'the open transaction holds the head below b').not.toBe(`${newest.tx}.${newest.position}`);

      const atNewest = await feed(encodeFeedCursor(newest));
      expect(atNewest.statusCode, atNewest.body).toBe(200);
      expect(atNewest.json().items).toEqual([]);
      const beyondNewest = encodeFeedCursor({ tx: newest.tx, position: newest.position + 1 });
      expect((await feed(beyondNewest)).json()).toMatchObject({ code: 'invalid_query', errors: [{ path: 'after' }] });
      const refused = await stream(token, '', { 'last-event-id': beyondNewest });
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'invalid_query' });

      const resumed = await stream(token, '', { 'last-event-id': encodeFeedCursor(newest) });
      expect(resumed.status).toBe(200);
      const later = await write('issues', 'c');
      release();
      await waitFor(() => resumed.events().length === 1, 'the event after the newest');
      expect(ids(resumed)).toEqual([later]);
    } finally {
      release();
      await holding;
    }
  });

  it('a token revoked (or a session logged out) in this process ends its streams at once, before any later event', async () => {
    // Re-checks every minute only: what ends these streams is the revocation itself.
    await start({}, { ...FAST, recheckMs: 60_000 });
    const created = (await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: t.admin.headers, payload: { name: 'r', scopes: ['events:read'], collections: null } })).json();
    const revoked = await stream(created.token);
    const before = await write('issues', 'before');
    await waitFor(() => ids(revoked).includes(before), 'the first event');
    expect((await t.app.inject({ method: 'DELETE', url: `/admin/v1/tokens/${created.id}`, headers: t.admin.headers })).statusCode).toBe(204);
    const after = await write('issues', 'after');
    await revoked.ended;
    expect(ids(revoked)).not.toContain(after);
    expect(revoked.events().at(-1)).toMatchObject({ event: 'error' });
    expect(JSON.parse(revoked.events().at(-1)!.data!).code).toBe('unauthorized');

    const admin = await openSse(`${base}/admin/v1/events/stream`, t.admin.headers);
    clients.push(admin);
    expect(admin.status).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: '/admin/v1/session', headers: t.admin.headers })).statusCode).toBe(204);
    await admin.ended;
    expect(JSON.parse(admin.events().at(-1)!.data!).code).toBe('unauthorized');
  });

  it('outlives SVC_REQUEST_TIMEOUT_MS; the admin twin needs the CSRF header and sees every collection; close ends streams', async () => {
    await start({ SVC_REQUEST_TIMEOUT_MS: '200' });
    const admin = await openSse(`${base}/admin/v1/events/stream`, t.admin.headers);
    clients.push(admin);
    expect(admin.status).toBe(200);
    const noCsrf = await openSse(`${base}/admin/v1/events/stream`, { cookie: t.admin.cookie });
    expect(noCsrf.status).toBe(403);
    // Node checks the request timeout every 50 ms here (app.ts): five pings, 100 ms apart, is the stream open and
    // written to for 2.5 times the 200 ms timeout. A stream the timeout cut would send no more and fail this wait.
    await waitFor(() => admin.frames.filter((f) => f.comment === 'ping').length >= 5, 'five pings on the admin stream');
    const a = await write('issues', 'a');
    const n = await write('notes', 'n');
    await waitFor(() => admin.events().length === 2, 'both events');
    expect(ids(admin)).toEqual([a, n]);
    await t.app.close();
    await admin.ended;
  });
});
