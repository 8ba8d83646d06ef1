import { afterEach, describe, expect, it } from 'vitest';
import { startFeedApp, type FeedApp } from '../helpers/feed-app.js';
import { DIALECTS } from '../helpers/db.js';
import { seedFeedEvents } from '../helpers/feed-seed.js';
import { metric } from '../helpers/outage-client.js';
import { waitFor } from '../helpers/wait.js';

/** SPEC §12: long-polls cost nothing while they wait; at most SVC_LONG_POLLS_PER_TOKEN wait at once per token. */
describe.each(DIALECTS)('long-polls of the feed (%s)', (dialect) => {
  let f: FeedApp;
  afterEach(async () => f?.t.close());

  const start = async (env: Record<string, string>) => {
    f = await startFeedApp(dialect, { env, collections: ['quiet', 'busy'] });
  };
  const write = (collection: string, title: string) => f.create(collection, { title });
  /** A feed request over a real connection (a long-poll that its client abandons must notice). */
  const poll = async (query: string, headers: Record<string, string>, signal?: AbortSignal) => {
    const res = await fetch(`${f.base}/api/v1/events?${query}`, { headers, signal });
    return { status: res.status, headers: res.headers, body: await res.json() };
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  /**
   * Once `waiting` long-polls hold places (svc_feed_long_polls_waiting), the token's next one is refused. Probing
   * with polls until one was refused raced: a probe that came while a poll was still on its first read took the place
   * itself, and that poll got the 429.
   */
  const refusedOnce = async (headers: Record<string, string>, waiting: number) => {
    await waitFor(async () => (await metric(f.base, 'svc_feed_long_polls_waiting')) === waiting, `${waiting} long-polls waiting`, 20_000);
    const res = await poll('collection=quiet&after=now&wait=1', headers);
    expect(res.status).toBe(429);
    return res;
  };

  it('a waiting poll re-reads from the newest position it has examined, never from its after', async () => {
    await start({ SVC_LONG_POLLS_PER_TOKEN: '1' });
    // Busy events at odd positions only, all below the head; the even positions are gaps.
    const { tx, last } = await seedFeedEvents(f.t.ctx.database.db, dialect, { count: 2000, collection: 'busy', first: 1, step: 2 });
    const reader = bearer(await f.t.token(['events:read']));
    // From the oldest event: the first read examines all 2,000 busy events up to the head and finds nothing.
    const waiting = poll('collection=quiet&wait=20', reader);
    // The token's one place is taken once that poll waits: its first read is over.
    await refusedOnce(reader, 1);
    // An event of the quiet collection appears in a gap among the examined ones (no writer could put it there: a
    // position handed out is never passed by a later commit). A re-read from `after` would find it; one from where
    // the poll had examined up to never looks there.
    await seedFeedEvents(f.t.ctx.database.db, dialect, { count: 1, collection: 'quiet', first: last - 1, tx });
    const fresh = await write('quiet', 'fresh');
    const page = await waiting;
    expect(page.status).toBe(200);
    expect(page.body.items.map((e: { recordId: string }) => e.recordId)).toEqual([fresh]);
  });

  it('at most SVC_LONG_POLLS_PER_TOKEN wait at once per token: 429 with Retry-After beyond; places free when polls end', async () => {
    await start({ SVC_LONG_POLLS_PER_TOKEN: '2' });
    const token = await f.t.token(['events:read']);
    const reader = bearer(token);
    const busyBefore = (await poll('after=now', reader)).body.nextCursor;
    await write('busy', 'b');
    const first = poll('collection=quiet&after=now&wait=20', reader);
    const abandon = new AbortController();
    const second = poll('collection=quiet&after=now&wait=20', reader, abandon.signal).catch(() => null);
    const refused = await refusedOnce(reader, 2);
    expect(refused.body).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A poll with something to answer at once needs no place; other tokens and admin sessions have their own.
    const immediate = await poll(`after=${busyBefore}&wait=20`, reader);
    expect(immediate.status).toBe(200);
    expect(immediate.body.items).toHaveLength(1);
    expect((await poll('collection=quiet&after=now&wait=1', bearer(await f.t.token(['events:read'])))).status).toBe(200);
    const admin = await fetch(`${f.base}/admin/v1/events?after=now&wait=1`, { headers: f.t.admin.headers });
    expect(admin.status).toBe(200);

    // A client that leaves frees its place at once, before its wait is up.
    abandon.abort();
    await second;
    await waitFor(async () => (await poll('collection=quiet&after=now&wait=1', reader)).status === 200, 'the abandoned place free', 20_000);
    // Polls that are answered free their places.
    const third = poll('collection=quiet&after=now&wait=20', reader);
    await refusedOnce(reader, 2);
    const quiet = await write('quiet', 'q');
    for (const answered of [await first, await third]) expect(answered.body.items.map((e: { recordId: string }) => e.recordId)).toEqual([quiet]);
    expect((await poll('collection=quiet&after=now&wait=1', reader)).status).toBe(200);
  });
});
