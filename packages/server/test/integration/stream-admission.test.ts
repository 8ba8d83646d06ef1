import { afterEach, describe, expect, it } from 'vitest';
import { decodeFeedCursor, encodeFeedCursor } from '../../src/events/feed.js';
import type { TestApp } from '../helpers/app.js';
import { startFeedApp, type FeedApp } from '../helpers/feed-app.js';
import { DIALECTS } from '../helpers/db.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A stream is admitted once (events/stream-admission.ts), before anything is written, and holds its owner's place
 * from there: a start refused after admission (a cursor never issued) gives the place back, and an open stream holds
 * it until it ends.
 */
describe.each(DIALECTS)('event stream admission (%s)', (dialect) => {
  let t: TestApp;
  let f: FeedApp;
  const clients: SseClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await t?.close();
  });

  const stream = async (token: string, query = '') => {
    const c = await openSse(`${f.base}/api/v1/events/stream${query}`, { authorization: `Bearer ${token}` });
    clients.push(c);
    return c;
  };
  const streamsOpen = async () => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    return Number(/^svc_feed_streams_open (\d+)$/m.exec(text)?.[1]);
  };

  it('one place per token: a refused start gives it back at once, an open stream holds it until it ends', async () => {
    f = await startFeedApp(dialect, { env: { SVC_STREAMS_PER_TOKEN: '1' }, collections: ['issues'], streamTiming: { pingMs: 60_000, recheckMs: 100 } });
    ({ t } = f);
    const token = await t.token(['events:read']);
    await f.create('issues', { title: 'a' });
    const page = (await t.app.inject({ method: 'GET', url: '/api/v1/events', headers: { authorization: `Bearer ${token}` } })).json();
    const head = decodeFeedCursor(page.nextCursor) as { tx: number; position: number };
    const never = encodeFeedCursor({ tx: head.tx, position: head.position + 1000 });

    for (let i = 0; i < 3; i++) {
      const refused = await stream(token, `?after=${never}`);
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.body).code).toBe('invalid_query');
    }
    expect(await streamsOpen()).toBe(0);

    const open = await stream(token);
    expect(open.status).toBe(200);
    expect(await streamsOpen()).toBe(1);
    const beyond = await stream(token);
    expect(beyond.status).toBe(429);
    expect(JSON.parse(beyond.body).code).toBe('rate_limited');
    expect(beyond.headers.get('retry-after')).toBe('1');

    open.close();
    await waitFor(async () => (await streamsOpen()) === 0, 'the closed stream gives its place back');
    expect((await stream(token)).status).toBe(200);
  });
});
