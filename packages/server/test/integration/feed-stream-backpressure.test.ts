import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { FeedWaker } from '../../src/events/feed.js';
import { FeedFanout } from '../../src/events/stream-fanout.js';
import { createOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const LIMIT = 2 * 1024 * 1024;
const PAYLOAD = 256 * 1024;
/** An event's SSE frame besides its payload: the cursor, the topic, the event's other members (well under this). */
const FRAME_EXTRA = 1024;

/**
 * SPEC §12: a stream client is cut off only when more than SVC_STREAM_BUFFER_BYTES that it has not read waits for
 * it. The fan-out runs here on a plain HTTP server so that the test can read its log: the cut-off line says how
 * much was waiting, in bytes, when it cut (what svc holds; the kernel's buffers hold more besides, which svc cannot
 * see, so the client itself has left even more unread).
 */
describe.each(DIALECTS)('a stream client that stops reading (%s)', (dialect) => {
  let t: TestContext | null = null;
  let server: Server | null = null;
  let socket: Socket | null = null;
  let stop: (() => Promise<void>) | null = null;
  afterEach(async () => {
    socket?.destroy();
    await stop?.();
    if (server) await new Promise((r) => server!.close(r));
    await t?.close();
    t = server = socket = stop = null;
  });

  it('is cut off once more than SVC_STREAM_BUFFER_BYTES waits unread besides the event being sent, not before', async () => {
    // Reads of one event each (SVC_LIST_MAX_BYTES under two of them): each write adds one frame to what waits.
    t = await createTestContext(dialect, { SVC_STREAM_BUFFER_BYTES: String(LIMIT), SVC_LIST_MAX_BYTES: String(PAYLOAD + PAYLOAD / 2) });
    const lines: Array<{ msg: string; unreadBytes?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const ctx: Context = { ...t.ctx, logger };
    const waker = new FeedWaker(ctx);
    const closing = new AbortController();
    const fanout = new FeedFanout(ctx, waker, closing.signal, { pingMs: 60_000, recheckMs: 60_000 });
    stop = async () => {
      closing.abort();
      fanout.close();
      await waker.close();
    };
    server = createServer((_req, res) => {
      void fanout.open({ res, headers: {}, requestId: 'slow', filter: { collections: null, topics: null }, start: 'now', owner: 'o', release: fanout.admit('o'), recheck: async () => null });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;

    socket = connect(port, '127.0.0.1');
    let received = 0;
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    });
    const ended = new Promise<void>((r) => socket!.once('close', () => r()));
    socket.write('GET /stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    await waitFor(() => Buffer.concat(chunks).includes('retry: 2000'), 'the stream to start');
    // From here on the client reads nothing: the kernel's buffers fill, then svc's.
    socket.pause();

    const outbox = createOutbox(ctx.database, logger, null);
    const cutOff = () => lines.find((l) => l.msg.startsWith('event stream cut off'));
    let written = 0;
    while (!cutOff() && written < 100) {
      const payload = { record: { id: `rec_${written}`, data: { body: String(written).padEnd(PAYLOAD, '.') } } };
      const enqueued = await ctx.database.db.transaction().execute((trx) =>
        outbox.enqueue(trx, { topic: 'record.created', collection: 'docs', recordId: `rec_${written}`, payload }, ctx.clock.now()),
      );
      await outbox.committed(enqueued);
      written++;
    }
    const line = await waitFor(cutOff, 'the cut-off');
    // Cut when, besides the largest event waiting (a frame, more than PAYLOAD), more than the limit waited, and at
    // the write that made it so: one frame past that at most.
    expect(line.unreadBytes!).toBeGreaterThan(LIMIT + PAYLOAD);
    expect(line.unreadBytes!).toBeLessThanOrEqual(LIMIT + 2 * (PAYLOAD + FRAME_EXTRA));

    // The client reads again: it gets what the kernel held (or nothing, when the close came as a reset), then the end.
    socket.resume();
    await ended;
    const text = Buffer.concat(chunks).toString('utf8');
    const bodies = [...text.matchAll(/"body":"(\d+)\.*"/g)].map((m) => Number(m[1]));
    expect(bodies).toEqual(bodies.map((_, i) => i));
    expect(bodies.length).toBeLessThan(written);
    // What the client never read is what svc held when it cut, and more (the kernel's part, lost with it).
    expect((written - bodies.length) * PAYLOAD).toBeGreaterThan(LIMIT);
    expect(received).toBeGreaterThan(0);
  });
});
