import { afterEach, describe, expect, it } from 'vitest';
import { startFeedApp, type FeedApp } from '../helpers/feed-app.js';
import { DIALECTS } from '../helpers/db.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12: a record of up to SVC_BODY_MAX_BYTES goes through the stream, live and catching up; a client that reads
 * is never cut off, however big the events or the backlog; an event larger than SVC_STREAM_BUFFER_BYTES is still
 * sent whole. (Before: the cut-off judged what one write put in the socket's buffer, a catch-up page of 200 events
 * or one frame, against 1 MiB, so 300 events of 8 KB from before them, or one 2 MB update, ended every stream.)
 */
describe.each(DIALECTS)('event streams carry big events and big backlogs (%s)', (dialect) => {
  let f: FeedApp;
  const clients: SseClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await f?.t.close();
  });

  const start = async (env: Record<string, string> = {}) => {
    f = await startFeedApp(dialect, { env, collections: ['docs'], fields: ['body'], streamTiming: { pingMs: 60_000, recheckMs: 60_000 } });
  };
  const stream = async (token: string, headers: Record<string, string> = {}) => {
    const c = await openSse(`${f.base}/api/v1/events/stream`, { authorization: `Bearer ${token}`, ...headers });
    expect(c.status, c.body).toBe(200);
    clients.push(c);
    return c;
  };
  const create = (body: string) => f.create('docs', { body });
  const update = (id: string, body: string) => f.update('docs', id, { body });
  const now = async (token: string): Promise<string> =>
    (await f.t.app.inject({ method: 'GET', url: '/api/v1/events?after=now', headers: { authorization: `Bearer ${token}` } })).json().nextCursor;
  /** A body as large as the default SVC_BODY_MAX_BYTES lets a create or update send (1 MiB with the JSON around it). */
  const largest = (c: string) => c.repeat(1_048_576 - 100);
  const events = (c: SseClient) => c.events().map((f) => ({ topic: f.event, ...JSON.parse(f.data!) }));

  it('a client that reads gets 300 events of 8 KB resuming from before them, and ~2 MB update events, caught up and live', async () => {
    await start();
    const reader = await f.t.token(['events:read']);
    const before = await now(reader);
    for (let b = 0; b < 3; b++) {
      const operations = Array.from({ length: 100 }, (_, i) => ({ method: 'POST', collection: 'docs', data: { body: `${b * 100 + i} `.padEnd(8192, 'z') } }));
      const res = await f.t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: f.writer, payload: { operations } });
      expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    }
    const big = await create(largest('a'));
    await update(big, largest('b'));

    const catchingUp = await stream(reader, { 'last-event-id': before });
    await waitFor(() => catchingUp.events().length === 302, '302 events caught up', 20_000);
    const caught = events(catchingUp);
    expect(caught.slice(0, 300).map((e) => Number.parseInt(e.payload.record.data.body, 10))).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(caught.slice(0, 300).every((e) => e.payload.record.data.body.length === 8192)).toBe(true);
    const updated = caught[301]!;
    expect(updated.topic).toBe('record.updated');
    expect(updated.payload.record.data.body).toBe(largest('b'));
    expect(updated.payload.previous.data.body).toBe(largest('a'));
    expect(catchingUp.frames.some((f) => f.event === 'error')).toBe(false);

    // Live: the shared reader hands the same ~2 MB frame to a stream that joined at the present and to the one that
    // caught up.
    const live = await stream(reader);
    await update(big, largest('c'));
    for (const c of [live, catchingUp]) await waitFor(() => c.events().some((f) => f.event === 'record.updated' && f.data!.includes('"body":"ccc')), 'the live update', 20_000);
    const [liveUpdate] = events(live);
    expect(liveUpdate!.payload.record.data.body).toBe(largest('c'));
    expect(liveUpdate!.payload.previous.data.body).toBe(largest('b'));
    expect(Buffer.byteLength(live.events()[0]!.data!)).toBeGreaterThan(2 * 1_048_000);
  });

  it('an event larger than SVC_STREAM_BUFFER_BYTES is still sent whole, live and caught up', async () => {
    await start({ SVC_STREAM_BUFFER_BYTES: '65536' });
    const reader = await f.t.token(['events:read']);
    const before = await now(reader);
    const live = await stream(reader);
    const id = await create(largest('d'));
    await update(id, largest('e'));
    await waitFor(() => live.events().length === 2, 'both events live', 20_000);
    const caught = await stream(reader, { 'last-event-id': before });
    await waitFor(() => caught.events().length === 2, 'both events caught up', 20_000);
    for (const c of [live, caught]) {
      const [created, updated] = events(c);
      expect(created!.payload.record.data.body).toBe(largest('d'));
      expect(updated!.payload.record.data.body).toBe(largest('e'));
      expect(updated!.payload.previous.data.body).toBe(largest('d'));
    }
  });
});
