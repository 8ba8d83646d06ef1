import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { listen } from '../../src/cli/listen.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12: `svc listen` bounds what a server can make it do. A synthetic SSE server (no svc) plays a broken or
 * hostile one: an endless line (16 MiB bound: the connection is dropped, with a message, and listen reconnects),
 * `retry:` values outside 250 ms…60 s, and endless answers, of a receiver or of a proxy in front of svc (64 KiB read;
 * of a 200 feed page, as much as svc's largest page).
 */

const MiB = 1024 * 1024;
const EVENT_ID = 'evt_01JD0000000000000000000000';

const eventFrame = (cursor: string) =>
  `id: ${cursor}\nevent: record.created\ndata: ${JSON.stringify({
    id: EVENT_ID,
    topic: 'record.created',
    collection: 'issues',
    recordId: 'rec_01JD0000000000000000000000',
    occurredAt: '2026-11-26T00:00:00.000Z',
    payload: { record: { id: 'rec_01JD0000000000000000000000' }, occurredAt: '2026-11-26T00:00:00.000Z', eventId: EVENT_ID },
  })}\n\n`;

interface Connection {
  lastEventId: string | undefined;
  openedAt: number;
  endedAt?: number;
  /** Bytes the server's writes handed to the socket before the client left. */
  written: number;
  closedByClient: boolean;
}

type Script = (res: ServerResponse, conn: Connection) => void | Promise<void>;

/** An SSE server playing `scripts[n]` on its n-th stream connection (the last one again after that). */
async function startSseServer(scripts: Script[]) {
  const connections: Connection[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const conn: Connection = { lastEventId: req.headers['last-event-id'] as string | undefined, openedAt: performance.now(), written: 0, closedByClient: false };
    connections.push(conn);
    res.on('close', () => {
      if (!res.writableFinished) conn.closedByClient = true;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    void scripts[Math.min(connections.length, scripts.length) - 1]!(res, conn);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    connections,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Writes `bytes` of one line's worth of `x`, a MiB at a time, as fast as the client reads; stops when it leaves. */
async function endlessLine(res: ServerResponse, conn: Connection, bytes: number): Promise<void> {
  const chunk = Buffer.alloc(MiB, 'x');
  res.write('data: ');
  for (let sent = 0; sent < bytes && !conn.closedByClient; sent += MiB) {
    const more = res.write(chunk, (err) => {
      if (!err) conn.written += chunk.length;
    });
    if (!more) {
      await new Promise<void>((resolve) => {
        const go = () => (res.off('drain', go), res.off('close', go), resolve());
        res.once('drain', go);
        res.once('close', go);
      });
    }
  }
  if (!conn.closedByClient) res.end('\n\n');
}

async function startReceiver() {
  const forwards: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      forwards.push(String(req.headers['svc-delivery']));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, forwards, close: () => new Promise((r) => server.close(r)) };
}

describe('svc listen against a broken SSE server', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function run(sse: { url: string }, receiverUrl: string) {
    const lines: string[] = [];
    const stop = new AbortController();
    const done = listen({
      url: sse.url,
      token: 'svc_pat_test',
      forwardTo: receiverUrl,
      collections: [],
      topics: [],
      after: 'c0',
      secret: 'whsec_0123456789abcdef0123',
      print: (line) => lines.push(line),
      signal: stop.signal,
    });
    cleanups.push(async () => (stop.abort(), await done.catch(() => undefined)));
    return { lines, stop, done };
  }

  it('drops a connection whose line passes 16 MiB, says so, and resumes from where it stood', async () => {
    const sse = await startSseServer([
      async (res, conn) => (res.write('retry: 300\n\n'), await endlessLine(res, conn, 64 * MiB)),
      (res) => void res.write(eventFrame('c1')),
    ]);
    cleanups.push(() => sse.close());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { lines } = await run(sse, receiver.url);

    await waitFor(() => receiver.forwards.length === 1, 'the event of the second connection', 30_000);
    expect(lines).toContain('the stream sent a line longer than 16 MiB; dropped the connection; reconnecting in 300ms');
    expect(sse.connections).toHaveLength(2);
    const [endless, second] = sse.connections as [Connection, Connection];
    // Cut well before the 64 MiB the server meant to send (kernel and client buffers hold a few MiB beyond 16).
    expect(endless.closedByClient).toBe(true);
    expect(endless.written).toBeLessThan(40 * MiB);
    expect(endless.written).toBeGreaterThanOrEqual(16 * MiB);
    expect(second.lastEventId).toBe('c0');
  }, 60_000);

  it('bounds the server’s retry: to 250 ms … 60 s', async () => {
    const sse = await startSseServer([
      (res) => void res.end('retry: 0\n\n'),
      (res) => void res.end('retry: 3600000\n\n'),
    ]);
    cleanups.push(() => sse.close());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { lines, stop, done } = await run(sse, receiver.url);

    await waitFor(() => lines.includes('the stream ended; reconnecting in 60s'), 'the second stream to end', 20_000);
    expect(lines).toEqual([
      'connected: following the event stream',
      'svc asked to wait 0 ms before reconnecting; waiting 250ms instead',
      'the stream ended; reconnecting in 250ms',
      'connected: following the event stream',
      'svc asked to wait 3600000 ms before reconnecting; waiting 60s instead',
      'the stream ended; reconnecting in 60s',
    ]);
    // The 250 ms floor, as measured by the server between the two connections (a slow machine only adds to it).
    const [a, b] = sse.connections as [Connection, Connection];
    expect(b.openedAt - a.openedAt).toBeGreaterThanOrEqual(240);
    // Waiting out the 60 s is listen's own timer; Ctrl-C ends it at once.
    stop.abort();
    expect(await done).toBe('c0');
  }, 60_000);
  it('reads at most 64 KiB of a receiver’s answer: an endless 200 body neither grows its memory nor holds the forward', async () => {
    // A receiver that answers 200 and then streams its body for as long as it is read (before: up to the 15 s
    // forward timeout, about 2 GB of memory for listen on loopback).
    const answer = { written: 0, closedAt: 0 };
    const receiver = await serve((req, res) => {
      req.resume();
      req.on('end', () => endlessAnswer(res, 200, 256 * MiB, answer));
    });
    const sse = await startSseServer([(res) => void res.write(eventFrame('c1'))]);
    cleanups.push(() => sse.close());
    const started = performance.now();
    const { lines } = await run(sse, `${receiver.url}/hook`);
    await waitFor(() => lines.some((l) => l.includes(' -> 200 (cursor c1)')), 'the forward to be answered', 30_000);
    // Answered and let go within a few seconds, not at the 15 s forward timeout; the receiver could hand over only
    // what socket buffers hold beyond the 64 KiB read.
    await waitFor(() => answer.closedAt > 0, 'listen to close the answer', 10_000);
    expect(answer.closedAt - started).toBeLessThan(5_000);
    expect(answer.written).toBeLessThan(32 * MiB);
  }, 60_000);

  it('reads at most 64 KiB of a non-200 answer to its stream request (a proxy’s error page), then reconnects', async () => {
    // Before, the whole body was read (res.arrayBuffer()): all 64 MiB here, without end for an endless one.
    const answer = { written: 0, closedAt: 0 };
    let requests = 0;
    const proxy = await serve((_req, res) => {
      if (++requests === 1) return endlessAnswer(res, 502, 64 * MiB, answer);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(eventFrame('c1'));
    });
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { lines } = await run(proxy, receiver.url);
    await waitFor(() => receiver.forwards.length === 1, 'the event of the second connection', 30_000);
    expect(lines.slice(0, 2)).toEqual(['svc answered 502; reconnecting in 2s', 'connected: following the event stream']);
    expect(answer.closedAt).toBeGreaterThan(0);
    expect(answer.written).toBeLessThan(32 * MiB);
  }, 60_000);

  it('reads at most 64 KiB of a refusal’s body and shows its start: an endless 401 from a proxy ends listen at once', async () => {
    const answer = { written: 0, closedAt: 0 };
    const proxy = await serve((_req, res) => endlessAnswer(res, 401, 64 * MiB, answer));
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { done } = await run(proxy, receiver.url);
    const error = await done.then(() => null, (err: Error) => err);
    // Before: the message held all 64 MiB of the body.
    expect(error?.message).toBe(`svc answered 401: ${'z'.repeat(200)}… (over 64 KiB, the rest not read)`);
    expect(answer.written).toBeLessThan(32 * MiB);
  }, 60_000);

  it('reads at most the largest feed page of a 200 to its start (a proxy’s endless body), says so, and asks again with the backoff', async () => {
    // Before, the page was read whole (res.json()): all 256 MiB here, without end for an endless one.
    const answer = { written: 0, closedAt: 0 };
    let pages = 0;
    const proxy = await serve((req, res) => {
      if (req.url!.startsWith('/api/v1/events?')) {
        if (++pages === 1) return endlessAnswer(res, 200, 256 * MiB, answer);
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [], nextCursor: 'c0' }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(eventFrame('c1'));
    });
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const lines: string[] = [];
    const stop = new AbortController();
    const done = listen({
      url: proxy.url,
      token: 'svc_pat_test',
      forwardTo: receiver.url,
      collections: [],
      topics: [],
      after: null,
      secret: 'whsec_0123456789abcdef0123',
      print: (line) => lines.push(line),
      signal: stop.signal,
      // The default, 1 GiB and 64 KiB (the largest SVC_LIST_MAX_BYTES and the page around it), is more than a test sends.
      pageMaxBytes: 4 * MiB,
    });
    cleanups.push(async () => (stop.abort(), await done.catch(() => undefined)));
    await waitFor(() => receiver.forwards.length === 1, 'the event after the second page', 30_000);
    expect(lines.slice(0, 2)).toEqual([
      'svc answered 200 with more than 4.0 MiB, more than any page of its feed (a proxy in between?); the rest not read; retrying in 1s',
      'connected: following the event stream',
    ]);
    expect(pages).toBe(2);
    expect(answer.closedAt).toBeGreaterThan(0);
    expect(answer.written).toBeLessThan(32 * MiB);
  }, 60_000);

  async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
  }
});

/** Answers `status` with `bytes` of `z` (then ends), as fast as the client reads; counts what it handed to the socket. */
function endlessAnswer(res: ServerResponse, status: number, bytes: number, answer: { written: number; closedAt: number }): void {
  const chunk = Buffer.alloc(MiB, 'z');
  res.writeHead(status);
  const pump = () => {
    while (!res.destroyed && answer.written < bytes) {
      answer.written += chunk.length;
      if (!res.write(chunk)) return;
    }
    if (!res.destroyed) res.end();
  };
  res.on('drain', pump);
  res.on('close', () => (answer.closedAt = performance.now()));
  pump();
}
