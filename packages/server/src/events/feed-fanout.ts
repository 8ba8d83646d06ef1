import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Context } from '../context.js';
import { AppError, problemBody } from '../errors.js';
import { encodeFeedCursor, laterOf, ORIGIN, RECHECK_MS, refuseExpired, refuseUnissued, type FeedWaker } from './feed.js';
import { OPERATIONAL_COLLECTION } from '../lib/ids.js';
import { beyond, readFeed, type FeedFilter, type FeedPosition, type FeedRow } from './feed-store.js';

/** Timings of the event streams; internal (tests shorten them), not configuration. */
export interface StreamTiming {
  /** A `: ping` comment this often (SPEC §7: at least every 15 s). */
  pingMs: number;
  /** Each credential holding streams is looked up again this often: a revoked token ends its streams. */
  recheckMs: number;
  /** A client with this much written but not yet read is cut off (SPEC §7: 1 MiB). */
  maxBufferedBytes: number;
}

// Credentials are re-checked every second: the bound on how long another process's stream of a revoked token or an
// ended session goes on (in the process that revoked it, recheckOwner ends them at once).
export const STREAM_TIMING: StreamTiming = { pingMs: 15_000, recheckMs: 1_000, maxBufferedBytes: 1024 * 1024 };

/** The shared reader reads this many events per statement; a catching-up stream reads fewer, waiting for its client in between. */
const LIVE_PAGE = 1000;
const CATCH_UP_PAGE = 200;

export interface StreamRequest {
  res: ServerResponse;
  headers: OutgoingHttpHeaders;
  requestId: string;
  filter: FeedFilter;
  start: FeedPosition | 'now';
  /** Who holds the stream (a token, an admin session): the per-token limit and the re-check go by it. */
  owner: string;
  /** The error that ends the stream when the credential no longer holds, else null. */
  recheck(): Promise<AppError | null>;
}

const before = (a: FeedPosition, b: FeedPosition): boolean => beyond(b, a);
const matches = (f: FeedFilter, row: FeedRow): boolean =>
  (f.operational === true || row.collection !== OPERATIONAL_COLLECTION) &&
  (f.collections === null || f.collections.includes(row.collection)) && (f.topics === null || f.topics.includes(row.topic));
/** One event as an SSE frame; its JSON has no line breaks (stored payloads are compact JSON). */
const frameOf = (row: FeedRow): Buffer => Buffer.from(`id: ${encodeFeedCursor(row)}\nevent: ${row.topic}\ndata: ${row.json}\n\n`);
/** The frames of a read's events, and all of them as one buffer. */
function framesOf(rows: readonly FeedRow[]): [Buffer[], Buffer] {
  const frames = rows.map(frameOf);
  return [frames, frames.length === 1 ? frames[0]! : Buffer.concat(frames)];
}
const PING = Buffer.from(': ping\n\n');

class FeedStream {
  closed = false;
  live = false;
  /** The last position this stream has been handed (or, joining live, was level with). */
  position: FeedPosition = ORIGIN;

  constructor(
    readonly req: StreamRequest,
    private readonly timing: StreamTiming,
    private readonly onClose: (s: FeedStream) => void,
  ) {
    req.res.on('close', () => this.finish());
  }

  /** Writes, and cuts off a client that has stopped reading (it resumes with Last-Event-ID). */
  write(chunk: Buffer): void {
    if (this.closed) return;
    this.req.res.write(chunk);
    if (this.req.res.writableLength > this.timing.maxBufferedBytes) {
      this.req.res.destroy();
      this.finish();
    }
  }

  /**
   * Hands over the events of one read that are after this stream's position and match its filters, in one write:
   * `all` (the read's frames together, shared by every stream) when it takes every one. One write per read rather
   * than per event: a burst of k events costs each stream one chunk instead of k.
   */
  send(rows: readonly FeedRow[], frames: readonly Buffer[], all: Buffer): void {
    const taken: Buffer[] = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (!before(this.position, row)) continue;
      this.position = row;
      if (matches(this.req.filter, row)) taken.push(frames[i]!);
    }
    if (taken.length === 0) return;
    this.write(taken.length === rows.length ? all : Buffer.concat(taken));
  }

  /** An error after the stream started: `event: error` with the problem, then the end (SPEC §7). */
  fail(err: AppError): void {
    if (this.closed) return;
    const problem = problemBody(err.code, err.message, this.req.requestId, err.extra.errors);
    this.req.res.end(`event: error\ndata: ${JSON.stringify(problem)}\n\n`);
    this.finish();
  }

  end(): void {
    if (this.closed) return;
    this.req.res.end();
    this.finish();
  }

  /** Resolves once the client has read most of what waits for it; a client that reads nothing for long is cut off. */
  async drained(): Promise<void> {
    const res = this.req.res;
    if (this.closed || res.writableLength <= this.timing.maxBufferedBytes / 4) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      const timer = setTimeout(() => {
        res.destroy();
        done();
      }, 2 * this.timing.pingMs);
      res.once('drain', done);
      res.once('close', done);
    });
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
  }
}

/**
 * One reader per process for every event stream. Each wake-up reads the new events once (below the horizon, as the
 * pull feed does), makes each one's SSE frame once, and hands the frame to every live stream whose filters match.
 * A stream that starts in the past reads its backlog with ordinary pages of its own, then joins: only when its own
 * position has reached the shared reader's (see join), so nothing between the two is skipped or sent twice.
 * No stream reads the database while it is live; nobody holds a transaction while waiting.
 */
export class FeedFanout {
  private readonly streams = new Set<FeedStream>();
  private readonly live = new Set<FeedStream>();
  private readonly perOwner = new Map<string, number>();
  /** Where the shared reader has read up to; meaningful while it runs. */
  private position: FeedPosition = ORIGIN;
  private running = false;
  private ping: NodeJS.Timeout | null = null;
  private recheck: NodeJS.Timeout | null = null;
  private rechecking = false;

  constructor(
    private readonly ctx: Context,
    private readonly waker: FeedWaker,
    private readonly closing: AbortSignal,
    private readonly timing: StreamTiming = STREAM_TIMING,
  ) {}

  /** Refuses a stream beyond SVC_STREAMS_PER_TOKEN for its owner, before anything is written. */
  admit(owner: string): void {
    if ((this.perOwner.get(owner) ?? 0) >= this.ctx.config.streamsPerToken) {
      throw new AppError('rate_limited', `At most ${this.ctx.config.streamsPerToken} event streams per token in one process; close one first.`, {
        headers: { 'retry-after': String(Math.ceil(this.timing.recheckMs / 1000)) },
      });
    }
    if (this.closing.aborted) throw new AppError('unavailable', 'This process is shutting down; try again.');
  }

  /** Starts a stream on a response whose headers are not yet written; runs until the client leaves or svc closes. */
  async open(req: StreamRequest): Promise<void> {
    this.admit(req.owner);
    const stream = new FeedStream(req, this.timing, (s) => this.forget(s));
    this.streams.add(stream);
    this.perOwner.set(req.owner, (this.perOwner.get(req.owner) ?? 0) + 1);
    this.startTimers();
    try {
      // Joined before the headers go out: an event committed once the client sees the answer is in its stream.
      stream.position = req.start !== 'now' ? req.start : this.running ? this.position : await this.head();
      // A made-up position beyond the head would skip every event up to it (the pull feed refuses it alike).
      if (req.start !== 'now') await refuseUnissued(this.ctx.database.db, req.start, null, 'Last-Event-ID');
      const joined = req.start === 'now' && this.join(stream, true);
      this.writeHead(stream);
      if (!joined) await this.catchUp(stream, req.start === 'now');
    } catch (err) {
      this.ctx.logger.warn({ err, requestId: req.requestId }, 'event stream failed');
      if (!req.res.headersSent) this.writeHead(stream);
      stream.fail(err instanceof AppError ? err : new AppError('unavailable', 'The event stream failed on our side; reconnect with Last-Event-ID.'));
    }
  }

  private writeHead(stream: FeedStream): void {
    const { res, headers } = stream.req;
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Proxies that buffer answers (nginx) would hold events back.
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
  }

  private async head(): Promise<FeedPosition> {
    const { db, caps } = this.ctx.database;
    return (await readFeed(db, caps, { after: null, filter: { collections: null, topics: null, operational: true }, limit: 0 })).head ?? ORIGIN;
  }

  /** Backlog in pages of its own, checked against retention each time, until it can join the shared reader. */
  private async catchUp(stream: FeedStream, atHead: boolean): Promise<void> {
    const { db, caps } = this.ctx.database;
    let caughtUp = atHead;
    while (!stream.closed) {
      if (this.join(stream, caughtUp)) return;
      await refuseExpired(this.ctx, stream.position);
      const after = stream.position;
      const { rows, head } = await readFeed(db, caps, { after, filter: stream.req.filter, limit: CATCH_UP_PAGE });
      stream.send(rows, ...framesOf(rows));
      caughtUp = rows.length < CATCH_UP_PAGE;
      stream.position = caughtUp ? laterOf(head, stream.position) : rows[rows.length - 1]!;
      await stream.drained();
    }
  }

  /**
   * A stream joins the live set once its position is at or past the shared reader's: the reader hands out only
   * events after its own position, and each stream takes only those after its own, so the stream gets exactly the
   * events after where it stood. Called synchronously after a read, so the reader cannot move in between. With no
   * reader running, a stream that has just read to the head starts one from there.
   */
  private join(stream: FeedStream, caughtUp: boolean): boolean {
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
    if (before(stream.position, this.position)) return false;
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

  private async readNew(): Promise<void> {
    const { db, caps } = this.ctx.database;
    for (;;) {
      const { rows, head } = await readFeed(db, caps, { after: this.position, filter: { collections: null, topics: null, operational: true }, limit: LIVE_PAGE });
      if (rows.length > 0) {
        // Each event's frame is made once, and the read's frames joined once, for every stream.
        const [frames, all] = framesOf(rows);
        for (const stream of this.live) stream.send(rows, frames, all);
      }
      this.position = rows.length === LIVE_PAGE ? rows[rows.length - 1]! : laterOf(head, this.position);
      if (rows.length < LIVE_PAGE || this.live.size === 0) return;
    }
  }

  private startTimers(): void {
    this.ping ??= setInterval(() => {
      for (const stream of this.streams) stream.write(PING);
    }, this.timing.pingMs);
    this.recheck ??= setInterval(() => void this.recheckOwners(), this.timing.recheckMs);
  }

  /** One look-up per credential, however many streams it holds. */
  private async recheckOwners(): Promise<void> {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      const byOwner = new Map<string, FeedStream[]>();
      for (const s of this.streams) byOwner.set(s.req.owner, [...(byOwner.get(s.req.owner) ?? []), s]);
      for (const streams of byOwner.values()) await this.recheckStreams(streams);
    } finally {
      this.rechecking = false;
    }
  }

  /**
   * Checks one owner's credential now, after it was revoked in this process (a token deleted, a session ended): its
   * streams end before anything committed later reaches them.
   */
  async recheckOwner(owner: string): Promise<void> {
    await this.recheckStreams([...this.streams].filter((s) => s.req.owner === owner));
  }

  private async recheckStreams(streams: readonly FeedStream[]): Promise<void> {
    if (streams.length === 0) return;
    const err = await streams[0]!.req.recheck().catch(() => null);
    if (err) for (const s of streams) s.fail(err);
  }

  private forget(stream: FeedStream): void {
    this.streams.delete(stream);
    this.live.delete(stream);
    const left = (this.perOwner.get(stream.req.owner) ?? 1) - 1;
    if (left > 0) this.perOwner.set(stream.req.owner, left);
    else this.perOwner.delete(stream.req.owner);
    if (this.streams.size === 0) this.stopTimers();
  }

  private stopTimers(): void {
    if (this.ping) clearInterval(this.ping);
    if (this.recheck) clearInterval(this.recheck);
    this.ping = this.recheck = null;
  }

  /** Ends every stream (their clients reconnect elsewhere with Last-Event-ID); the closing signal stops the reader. */
  close(): void {
    for (const stream of [...this.streams]) stream.end();
    this.stopTimers();
  }
}
