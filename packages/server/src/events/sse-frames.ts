import { problemBody, type AppError } from '../errors.js';
import { encodeFeedCursor } from './feed.js';
import type { FeedRow } from './feed-store.js';

/**
 * The event stream's wire format (SPEC §7, Server-Sent Events): every byte svc writes on a stream is made here, the
 * headers included. stream-connection.ts writes them to one client; stream-fanout.ts makes each event's frame once
 * for all of them.
 */

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // Proxies that buffer answers (nginx) would hold events back.
  'x-accel-buffering': 'no',
} as const;

/** The first frame: how long a client waits before it reconnects with Last-Event-ID. */
export const RETRY_FRAME = Buffer.from('retry: 2000\n\n');

/** A comment, at least every 15 s (SPEC §7): keeps proxies from closing a quiet stream. */
export const PING_FRAME = Buffer.from(': ping\n\n');

/** One event; its JSON has no line breaks (stored payloads are compact JSON), so one `data:` line holds it. */
export const eventFrame = (row: FeedRow): Buffer => Buffer.from(`id: ${encodeFeedCursor(row)}\nevent: ${row.topic}\ndata: ${row.json}\n\n`);

/** The frames of a read's events, all of them as one buffer, and the largest. */
export function eventFrames(rows: readonly FeedRow[]): { frames: Buffer[]; all: Buffer; largest: number } {
  const frames = rows.map(eventFrame);
  return { frames, all: frames.length === 1 ? frames[0]! : Buffer.concat(frames), largest: Math.max(0, ...frames.map((f) => f.length)) };
}

/** An error after the stream started: `event: error` with the problem as `data`; the stream ends after it. */
export const errorFrame = (err: AppError, requestId: string): string =>
  `event: error\ndata: ${JSON.stringify(problemBody(err.code, err.message, requestId, err.extra.errors))}\n\n`;
