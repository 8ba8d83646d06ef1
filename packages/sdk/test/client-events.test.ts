import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, SvcApiError, type FeedEvent, type SvcClient } from '../src/client/index.js';
import { DIALECTS, startClientTestServer, type ClientTestServer } from './helpers/client-server.js';

describe.each(DIALECTS)('svc-sdk events against svc (%s)', (dialect) => {
  let s: ClientTestServer;
  let client: SvcClient;
  let token: string;
  const write = (title: string) => client.records<{ title: string }>('issues').create({ title });

  beforeAll(async () => {
    s = await startClientTestServer({ dialect, collections: { issues: [{ name: 'title', type: 'text', required: true }] } });
    const created = await s.admin('POST', '/admin/v1/tokens', { name: 'events', scopes: ['records:read', 'records:write', 'events:read'], collections: null });
    const body = (await created.json()) as { token: string };
    if (created.status !== 201) throw new Error(`token: ${created.status} ${JSON.stringify(body)}`);
    token = body.token;
    client = createClient({ baseUrl: s.baseUrl, token });
  });
  afterAll(async () => s?.close());
  /** A gauge of svc's /metrics (no SVC_METRICS_TOKEN in tests). */
  const gauge = async (name: string): Promise<number> => {
    const text = await (await fetch(`${s.baseUrl}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  };

  it('list() follows the feed with long-polls; its cursor moves past a page once every event of it was taken', async () => {
    const start = (await client.events.page({ after: 'now' })).nextCursor;
    const a = await write('a');
    const b = await write('b');
    const feed = client.events.list({ after: start, collection: 'issues', wait: 10 });
    const events = feed[Symbol.asyncIterator]();
    expect(((await events.next()).value as FeedEvent).recordId).toBe(a.id);
    expect(((await events.next()).value as FeedEvent).recordId).toBe(b.id);
    expect(feed.cursor).toBe(start);
    // The next call finishes the page (the cursor moves) and long-polls until c commits: c is written once svc
    // counts the poll as waiting.
    const pending = events.next();
    await waitUntilAsync(async () => (await gauge('svc_feed_long_polls_waiting')) === 1);
    const c = await write('c');
    const third = (await pending).value as FeedEvent;
    expect(third.recordId).toBe(c.id);
    expect(third.payload.eventId).toBe(third.id);
    const resumed = client.events.list({ after: feed.cursor, wait: 0 })[Symbol.asyncIterator]();
    expect(((await resumed.next()).value as FeedEvent).recordId).toBe(c.id);
    await events.return?.();
    await resumed.return?.();
  });

  it('stream() reads the live stream and reconnects from the last event after a dropped connection', async () => {
    // A fetch whose stream connections the test can drop, as a proxy restart would.
    const live = new Set<AbortController>();
    let connects = 0;
    let answered = 0;
    const droppable = createClient({
      baseUrl: s.baseUrl,
      token,
      fetch: async (request) => {
        if (!request.url.includes('/events/stream')) return fetch(request);
        connects++;
        const cut = new AbortController();
        live.add(cut);
        const response = await fetch(new Request(request, { signal: AbortSignal.any([cut.signal, request.signal]) }));
        // svc sends a stream's headers once it has joined the feed: an event committed from now on is in it.
        answered++;
        return response;
      },
    });
    const stop = new AbortController();
    const stream = droppable.events.stream({ signal: stop.signal, topic: 'record.created' });
    const received: string[] = [];
    const reading = (async () => {
      for await (const event of stream) {
        received.push(event.recordId);
        if (received.length === 6) stop.abort();
      }
    })();
    await waitUntil(() => answered === 1);
    const written = [await write('1'), await write('2'), await write('3')];
    await waitUntil(() => received.length === 3);
    for (const cut of live) cut.abort();
    written.push(await write('4'), await write('5')); // while disconnected
    await waitUntil(() => connects === 2);
    written.push(await write('6'));
    await reading;
    expect(received).toEqual(written.map((r) => r.id));
    expect(stream.lastEventId).toBeTruthy();
  }, 30_000);

  it('stream() rejects with SvcApiError on what reconnecting cannot fix', async () => {
    const bad = createClient({ baseUrl: s.baseUrl, token: 'svc_pat_nope' });
    const error = await (async () => {
      for await (const _ of bad.events.stream()) return null;
      return null;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcApiError);
    expect((error as SvcApiError).code).toBe('unauthorized');
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  await waitUntilAsync(async () => check(), timeoutMs);
}

async function waitUntilAsync(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
