import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiToken } from '../../src/auth/api-tokens.js';
import { encodeFeedCursor, ORIGIN } from '../../src/events/feed.js';
import { createCollection } from '../../src/records/collections.js';
import { createTestContext } from '../helpers/context.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/db.js';
import { seedFeedEvents } from '../helpers/feed-seed.js';
import { slowestHealthzDuring } from '../helpers/healthz-probe.js';
import { exited, spawnSvc } from '../helpers/processes.js';
import { freePort } from '../helpers/server.js';
import { metric } from '../helpers/outage-client.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12: a filtered feed read never holds the process, however many events its filter skips. Issue 22's outside
 * re-run: ten `GET /api/v1/events?collection=quiet` beside 282,000 events of another collection held /healthz for
 * 4.2 s on SQLite, and five streams catching up with `collection=quiet` from the start for 6.2 s: each read walked
 * every event after its cursor in one statement on the event loop. Here 200,000 busy events (odd positions), seeded
 * by SQL, with or without 100 quiet ones among them (every 4,000th position), and `svc serve` as a process of its
 * own, so that /healthz times its event loop and not the test's clients.
 */
const BUSY = 200_000;
const QUIET = 100;
const QUIET_STEP = 4000;
const ORIGIN_CURSOR = encodeFeedCursor(ORIGIN);

describe.each(DIALECTS)('filtered feed reads over 200,000 skipped events (%s)', (dialect) => {
  let database: TestDatabase | null = null;
  let child: ChildProcess | null = null;
  const clients: SseClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    child?.kill('SIGTERM');
    if (child) await exited(child);
    child = null;
    await database?.drop();
    database = null;
  });

  /** svc serve on the seeded database: its address, the quiet events' record ids in feed order, a reader's headers. */
  async function seeded(opts: { quiet: boolean }): Promise<{ base: string; quiet: string[]; reader: Record<string, string>; write: (collection: string) => Promise<string> }> {
    database = await createTestDatabase(dialect);
    const env = { SVC_DATABASE_URL: database.url, SVC_SECRET_KEY: randomBytes(32).toString('hex'), SVC_LOG_LEVEL: 'warn' };
    const setup = await createTestContext(dialect, env, { database });
    for (const name of ['busy', 'quiet']) await createCollection(setup.ctx, name, [{ name: 'title', type: 'text', required: false, indexed: false }]);
    const token = await createApiToken(setup.ctx, { name: 'reader', scopes: ['events:read'], collections: null });
    const writer = await createApiToken(setup.ctx, { name: 'writer', scopes: ['records:write'], collections: null });
    const { tx } = await seedFeedEvents(setup.ctx.database.db, dialect, { count: BUSY, collection: 'busy', first: 1, step: 2 });
    if (opts.quiet) await seedFeedEvents(setup.ctx.database.db, dialect, { count: QUIET, collection: 'quiet', first: 2, step: QUIET_STEP, tx });
    await setup.ctx.database.close();

    const port = await freePort();
    child = spawnSvc(['serve', '--no-worker'], { ...env, SVC_HOST: '127.0.0.1', SVC_PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 200, 'svc to be ready', 120_000, 100);
    // Warm: a process's first requests compile routes' validators and serializers (compiledOnFirstUse), and its first
    // /metrics builds every collector (the walk's test reads it every 50 ms): one-offs of a new process, not the walk
    // this file times. One /metrics, one /healthz and one cheap read of the feed route (the first busy event) first.
    await metric(base, 'svc_feed_long_polls_waiting');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const warm = await fetch(`${base}/api/v1/events?collection=busy&limit=1`, { headers: { authorization: `Bearer ${token.token}` } });
    expect(warm.status).toBe(200);
    await warm.arrayBuffer();
    const quiet = Array.from({ length: QUIET }, (_, i) => `rec_seed${String(i).padStart(12, '0')}`);
    const write = async (collection: string): Promise<string> => {
      const res = await fetch(`${base}/api/v1/collections/${collection}/records`, {
        method: 'POST',
        headers: { authorization: `Bearer ${writer.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: { title: 't' } }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    return { base, quiet, reader: { authorization: `Bearer ${token.token}` }, write };
  }

  /** Pages through `query` from the start to the head: the record ids in the order read. */
  async function pageThrough(base: string, query: string, headers: Record<string, string>): Promise<string[]> {
    const ids: string[] = [];
    for (let after = ORIGIN_CURSOR; ; ) {
      const res = await fetch(`${base}/api/v1/events?${query}&after=${after}`, { headers });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: Array<{ recordId: string; collection: string }>; nextCursor: string };
      expect(page.items.every((e) => e.collection === 'quiet')).toBe(true);
      ids.push(...page.items.map((e) => e.recordId));
      // Resuming from the head finds nothing more: the page before it was the last.
      if (page.nextCursor === after) return ids;
      after = page.nextCursor;
    }
  }

  it('ten long-polls, then five streams, of a quiet collection from the start leave /healthz answering (within 500 ms beside the suite, 1,000 ms on PostgreSQL) while they walk 200,000 events', async () => {
    const { base, reader, write } = await seeded({ quiet: false });
    // The review's case: each poll's first read examines every busy event (finding nothing) before it waits.
    // /healthz is timed from before the first of them is sent until every poll waits (svc_feed_long_polls_waiting)
    // or, on a machine so slow that its walk outlasted its 30 s, has answered.
    let started = performance.now();
    let answered = 0;
    const polls = Array.from({ length: 10 }, () =>
      fetch(`${base}/api/v1/events?collection=quiet&wait=30`, { headers: reader })
        .then((r) => r.json())
        .finally(() => answered++),
    );
    const walked = waitFor(async () => (await metric(base, 'svc_feed_long_polls_waiting')) + answered === 10, 'ten long-polls waiting or answered', 240_000, 50);
    const pollsHealth = await slowestHealthzDuring(base, walked);
    console.log(`${dialect}: ten long-polls through their walk after ${Math.round(performance.now() - started)} ms; /healthz slowest ${pollsHealth.slowestMs.toFixed(1)} ms over ${pollsHealth.samples}`);

    // Each stream's catch-up reads as far; a quiet write reaches a stream once its catch-up has walked past the busy
    // events, and reaches every waiting poll.
    started = performance.now();
    let id = '';
    const catchingUp = (async () => {
      const streams = await Promise.all(Array.from({ length: 5 }, () => openSse(`${base}/api/v1/events/stream?collection=quiet`, { ...reader, 'last-event-id': ORIGIN_CURSOR })));
      clients.push(...streams);
      id = await write('quiet');
      for (const s of streams) await waitFor(() => s.events().length === 1, 'the quiet event on every stream', 240_000);
      return streams;
    })();
    const streamsHealth = await slowestHealthzDuring(base, catchingUp);
    console.log(`${dialect}: five streams caught up after ${Math.round(performance.now() - started)} ms; /healthz slowest ${streamsHealth.slowestMs.toFixed(1)} ms over ${streamsHealth.samples}`);
    for (const s of await catchingUp) {
      expect(s.status).toBe(200);
      expect(s.events().map((e) => (JSON.parse(e.data!) as { recordId: string }).recordId)).toEqual([id]);
    }
    for (const answer of await Promise.all(polls)) {
      // A poll whose 30 s ran out during a slow walk answered empty; its client polls again from the cursor it got.
      let page = answer as { items: Array<{ recordId: string }>; nextCursor: string };
      if (page.items.length === 0) page = (await (await fetch(`${base}/api/v1/events?collection=quiet&wait=30&after=${page.nextCursor}`, { headers: reader })).json()) as typeof page;
      expect(page.items.map((e) => e.recordId)).toEqual([id]);
    }
    // SPEC §12's 250 ms is the process's bound, measured by bench W14 on a quiet machine; here the probe runs beside
    // the whole suite on two cores, where an idle svc's /healthz alone peaked at 133 ms. 500 ms still tells the walk
    // in slices from the one statement it replaced (30,103 ms on SQLite), as retention-big-events does. On PostgreSQL
    // the walk is one statement per poll, run by ten database backends that take both cores for its ~0.8 s, not by
    // svc's loop; svc and this client wait to be scheduled beside them: 170–260 ms run alone, 521 ms once beside the
    // suite. 1,000 ms there still fails a loop held for the walk's length.
    const bound = dialect === 'postgres' ? 1000 : 500;
    expect(pollsHealth.slowestMs).toBeLessThan(bound);
    expect(streamsHealth.slowestMs).toBeLessThan(bound);
  }, 600_000);

  it('pages and streams of a collection whose events lie thousands apart get every one once, in order, each page or catch-up read cut where its walk stopped', async () => {
    const { base, quiet, reader } = await seeded({ quiet: true });
    for (const limit of [1000, 30]) expect(await pageThrough(base, `collection=quiet&limit=${limit}`, reader)).toEqual(quiet);
    const stream = await openSse(`${base}/api/v1/events/stream?collection=quiet`, { ...reader, 'last-event-id': ORIGIN_CURSOR });
    clients.push(stream);
    await waitFor(() => stream.events().length >= QUIET, `${QUIET} quiet events`, 120_000);
    expect(stream.events().map((e) => (JSON.parse(e.data!) as { recordId: string }).recordId)).toEqual(quiet);
    // A long-poll from the start answers with the first of them at once, not after its wait.
    const polled = performance.now();
    const res = await fetch(`${base}/api/v1/events?collection=quiet&limit=1000&wait=30&after=${ORIGIN_CURSOR}`, { headers: reader });
    const page = (await res.json()) as { items: Array<{ recordId: string }> };
    expect(performance.now() - polled).toBeLessThan(25_000);
    expect(page.items.length).toBeGreaterThan(0);
    expect(page.items.map((e) => e.recordId)).toEqual(quiet.slice(0, page.items.length));
  }, 300_000);
});
