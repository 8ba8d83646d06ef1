import type { Context } from '../context.js';
import { nextTurn } from '../lib/turns.js';
import { AppError } from '../errors.js';
import { laterOf, ORIGIN, RECHECK_MS, refuseExpired, type FeedWaker } from './feed.js';
import { beyond, readFeed, type FeedPosition } from './feed-store.js';
import { eventFrame, eventFrames, PING_FRAME } from './sse-frames.js';
import { StreamAdmission, shuttingDown } from './stream-admission.js';
import { StreamConnection, type StreamRequest } from './stream-connection.js';
import { StreamRechecks } from './stream-rechecks.js';

export type { StreamRequest } from './stream-connection.js';

/** Timings of the event streams; internal (tests shorten them), not configuration. */
export interface StreamTiming {
  /** A `: ping` comment this often (SPEC §7: at least every 15 s). */
  pingMs: number;
  /** Each credential holding streams is looked up again this often: a revoked token ends its streams. */
  recheckMs: number;
}

// Credentials are re-checked every second: the bound on how long another process's stream of a revoked token or an
// ended session goes on (in the process that revoked it, recheckOwner ends them at once).
export const STREAM_TIMING: StreamTiming = { pingMs: 15_000, recheckMs: 1_000 };

/**
 * The shared reader reads at most this many events per statement; a catching-up stream reads fewer, waiting for its
 * client in between. Both are cut at SVC_LIST_MAX_BYTES as they are read (feed-budget.ts).
 */
const LIVE_PAGE = 1000;
const CATCH_UP_PAGE = 200;

const ALL_EVENTS = { collections: null, topics: null, operational: true };

/**
 * One reader per process for every event stream. Each wake-up reads the new events once (below the horizon, as the
 * pull feed does), makes each one's SSE frame once, and hands the frame to every live stream whose filters match.
 * A stream that starts in the past reads its backlog with ordinary pages of its own, then joins: only when its own
 * position has reached the shared reader's (see join), so nothing between the two is skipped or sent twice.
 * No stream reads the database while it is live; nobody holds a transaction while waiting.
 */
export class FeedFanout {
  private readonly streams = new Set<StreamConnection>();
  private readonly live = new Set<StreamConnection>();
  private readonly admission: StreamAdmission;
  private readonly rechecks: StreamRechecks;
  /** Where the shared reader has read up to; meaningful while it runs. */
  private position: FeedPosition = ORIGIN;
  private running = false;
  private ping: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: Context,
    private readonly waker: FeedWaker,
    private readonly closing: AbortSignal,
    private readonly timing: StreamTiming = STREAM_TIMING,
  ) {
    this.admission = new StreamAdmission(ctx.config.streamsPerToken, closing, timing.recheckMs);
    this.rechecks = new StreamRechecks(timing.recheckMs);
  }

  /** Event streams admitted in this process and not yet ended. */
  get openStreams(): number {
    return this.admission.open;
  }

  /** A stream's admission (stream-admission.ts), once, before anything is written: its release goes into open()'s request. */
  admit(owner: string): () => void {
    return this.admission.admit(owner);
  }

  /**
   * Starts an admitted stream on a response whose headers are not yet written; runs until the client leaves or svc
   * closes. Its start was checked by the caller (refuseUnissued) while an error could still be an answer of its own.
   */
  async open(req: StreamRequest): Promise<void> {
    const cutOff = (unreadBytes: number) =>
      this.ctx.logger.info({ requestId: req.requestId, unreadBytes }, 'event stream cut off: its client left more than SVC_STREAM_BUFFER_BYTES unread');
    const stream = new StreamConnection(req, this.ctx.config.streamBufferBytes, (s) => this.forget(s), cutOff);
    this.streams.add(stream);
    this.rechecks.add(stream);
    this.ping ??= setInterval(() => {
      for (const s of this.streams) s.write(PING_FRAME);
    }, this.timing.pingMs);
    try {
      // Closed while the caller checked the start: close() has ended the streams it knew of, and would miss this one.
      if (this.closing.aborted) throw shuttingDown();
      // Joined before the headers go out: an event committed once the client sees the answer is in its stream.
      stream.position = req.start !== 'now' ? req.start : this.running ? this.position : await this.head();
      const joined = req.start === 'now' && this.join(stream, true);
      stream.writeHead();
      if (!joined) await this.catchUp(stream, req.start === 'now');
    } catch (err) {
      this.ctx.logger.warn({ err, requestId: req.requestId }, 'event stream failed');
      if (!req.res.headersSent) stream.writeHead();
      stream.fail(err instanceof AppError ? err : new AppError('unavailable', 'The event stream failed on our side; reconnect with Last-Event-ID.'));
    }
  }

  private async head(): Promise<FeedPosition> {
    const { db, caps } = this.ctx.database;
    return (await readFeed(db, caps, { after: null, filter: ALL_EVENTS, limit: 0, budget: 0 })).head ?? ORIGIN;
  }

  /**
   * Backlog in pages of its own, checked against retention each time, until it can join the shared reader. Each
   * page goes out as fast as the client reads it (StreamConnection.sendPaced), and the next is read once the socket has
   * taken most of it: a stream catching up holds about one page, however far behind it starts.
   */
  private async catchUp(stream: StreamConnection, atHead: boolean): Promise<void> {
    const { reads, caps } = this.ctx.database;
    let caughtUp = atHead;
    while (!stream.closed) {
      if (this.join(stream, caughtUp)) return;
      await refuseExpired(this.ctx, stream.position);
      const read = await readFeed(reads, caps, { after: stream.position, filter: stream.req.filter, limit: CATCH_UP_PAGE, budget: this.ctx.config.listMaxBytes });
      await stream.sendPaced(read.rows, read.rows.map(eventFrame));
      caughtUp = !read.full;
      stream.position = read.full ? read.rows.at(-1)! : laterOf(read.head, stream.position);
      // A client that reads as fast as it is sent (loopback: the socket takes every write, so the pacing never
      // waits) would otherwise have its pages read and sent back to back: 100 MB of backlog held /healthz 1.5 s.
      await nextTurn();
    }
  }

  /**
   * A stream joins the live set once its position is at or past the shared reader's: the reader hands out only
   * events after its own position, and each stream takes only those after its own, so the stream gets exactly the
   * events after where it stood. Synchronous, so the reader cannot move between the check and the join. With no
   * reader running, a stream that has just read to the head starts one from there.
   */
  private join(stream: StreamConnection, caughtUp: boolean): boolean {
    if (stream.closed) return true;
    if (!this.running) {
      if (!caughtUp) return false;
      this.position = stream.position;
      this.running = true;
      this.live.add(stream);
      stream.live = true;
      void this.run();
      return true;
    }
    if (beyond(this.position, stream.position)) return false;
    this.live.add(stream);
    stream.live = true;
    return true;
  }

  private async run(): Promise<void> {
    try {
      await this.waker.ready();
      while (this.live.size > 0 && !this.closing.aborted) {
        const seen = this.waker.wakeups;
        try {
          await this.readNew();
        } catch (err) {
          this.ctx.logger.warn({ err }, 'event streams: reading the feed failed; trying again');
        }
        if (this.live.size === 0) break;
        // A wake-up that came while reading means more may be there: read again at once.
        if (this.waker.wakeups === seen) await this.waker.wait(RECHECK_MS, this.closing);
      }
    } finally {
      this.running = false;
    }
  }

  /** Reads what is new, cut at SVC_LIST_MAX_BYTES per read as it is read, and hands it to every live stream. */
  private async readNew(): Promise<void> {
    const { reads, caps } = this.ctx.database;
    for (;;) {
      const read = await readFeed(reads, caps, { after: this.position, filter: ALL_EVENTS, limit: LIVE_PAGE, budget: this.ctx.config.listMaxBytes });
      if (read.rows.length > 0) {
        // Each event's frame is made once, and the read's frames joined once, for every stream.
        const { frames, all, largest } = eventFrames(read.rows);
        for (const stream of this.live) stream.send(read.rows, frames, all, largest);
      }
      this.position = read.full ? read.rows.at(-1)! : laterOf(read.head, this.position);
      if (!read.full || this.live.size === 0) return;
      // A burst committed at once (a batch, a replay) is many reads: one a turn.
      await nextTurn();
    }
  }

  /**
   * Checks one owner's credential now, after it was revoked in this process (a token deleted, a session ended): its
   * streams end before anything committed later reaches them.
   */
  recheckOwner(owner: string): Promise<void> {
    return this.rechecks.recheckOwner(owner);
  }

  private forget(stream: StreamConnection): void {
    stream.req.release();
    this.streams.delete(stream);
    this.live.delete(stream);
    this.rechecks.delete(stream);
    if (this.streams.size === 0) this.stopPing();
  }

  private stopPing(): void {
    if (this.ping) clearInterval(this.ping);
    this.ping = null;
  }

  /** Ends every stream (their clients reconnect elsewhere with Last-Event-ID); the closing signal stops the reader. */
  close(): void {
    for (const stream of [...this.streams]) stream.end();
    this.stopPing();
    this.rechecks.stop();
  }
}
