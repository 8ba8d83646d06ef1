import type { Context } from '../context.js';
import { FeedWaker } from './feed.js';
import { FeedReadAhead } from './feed-read-ahead.js';
import { FeedWatch } from './feed-watch.js';
import { OwnerSlots } from './owner-slots.js';
import { FeedFanout, STREAM_TIMING, type StreamTiming } from './stream-fanout.js';

/**
 * What every feed route of this app shares: one waker (one LISTEN connection), one fan-out for all streams, and the
 * signal of the app's close.
 */
export interface FeedRuntime {
  waker: FeedWaker;
  fanout: FeedFanout;
  /** Full pages read ahead for readers catching up (events/feed-read-ahead.ts). */
  readAhead: FeedReadAhead;
  /** Long-polls waiting per token or admin session (SVC_LONG_POLLS_PER_TOKEN), and the one look they share. */
  waits: OwnerSlots;
  watch: FeedWatch;
  closing: AbortSignal;
  close(): Promise<void>;
}

export function createFeedRuntime(ctx: Context, timing: StreamTiming = STREAM_TIMING): FeedRuntime {
  const waker = new FeedWaker(ctx);
  const closing = new AbortController();
  const fanout = new FeedFanout(ctx, waker, closing.signal, timing);
  const readAhead = new FeedReadAhead(ctx.clock);
  return {
    waker,
    fanout,
    readAhead,
    waits: new OwnerSlots(ctx.config.longPollsPerToken),
    watch: new FeedWatch(ctx, waker, closing.signal),
    closing: closing.signal,
    // A closing server answers its long-polls at once and ends its streams rather than holding the shutdown.
    async close() {
      closing.abort();
      fanout.close();
      readAhead.clear();
      await waker.close();
    },
  };
}
