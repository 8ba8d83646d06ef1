import type { Kysely } from 'kysely';
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { getMeta } from '../db/meta-store.js';
import { ownTurn } from '../lib/turns.js';
import type { Tables } from '../db/tables.js';
import { decodeCursor, encodeCursor, FRAME_CLOSE, FRAME_OPEN, listJson } from '../lib/cursor.js';
import { beyond, newestFeedPosition, readFeed, readFeedPage, type FeedFilter, type FeedPosition, type JoinedPage } from './feed-store.js';
import type { FeedReadAhead, FullPage } from './feed-read-ahead.js';
import { PRUNED_THROUGH_KEY } from './retention-store.js';

export { PRUNED_THROUGH_KEY };

/** Before the first event: where a feed read without `after` starts. */
export const ORIGIN: FeedPosition = { tx: -1, position: -1 };
/** Long-polls look again this often even without a wake-up (a lost NOTIFY, another process's commit). */
export const RECHECK_MS = 1000;

export const encodeFeedCursor = (p: FeedPosition): string => encodeCursor(`${p.tx}.${p.position}`);

/** `now` is the head; anything else a cursor this service issued (`invalid_query` otherwise). */
export function decodeFeedCursor(raw: string | undefined, parameter = 'after'): FeedPosition | 'now' | null {
  if (raw === 'now') return 'now';
  // The origin (an empty feed's head, -1.-1) or a position; nothing else was ever handed out.
  const text = decodeCursor(raw, /^(?:-1\.-1|\d{1,19}\.\d{1,19})$/, parameter);
  if (text === null) return null;
  const [tx, position] = text.split('.').map(Number) as [number, number];
  return { tx, position };
}

export interface FeedPageRequest {
  after: FeedPosition | 'now' | null;
  filter: FeedFilter;
  limit: number;
  waitMs: number;
  maxBytes: number;
  /** Aborted when the server closes: a long-poll answers at once with what it has. */
  signal: AbortSignal;
  waker: FeedWaker;
  /** Reads the next page ahead after a full one, once `whenSent` says this one is on its way (feed-read-ahead.ts). */
  readAhead?: { pages: FeedReadAhead; whenSent: (start: () => void) => void };
  /**
   * Called once, when the request is about to wait (its first read found nothing): takes one of its owner's places
   * for waiting long-polls and returns their release, or throws `rate_limited` (SVC_LONG_POLLS_PER_TOKEN).
   */
  holdWait?: () => () => void;
  /** Where a long-poll waits, when the process shares one look among its long-polls (feed-watch.ts); else `waker`. */
  watch?: LongPollWatch;
}

/** Waits for an event matching `filter` after `from`; says whether one may be there and how far it examined meanwhile. */
export interface LongPollWatch {
  until(filter: FeedFilter, from: FeedPosition, ms: number, signal: AbortSignal): Promise<{ matched: boolean; examined: FeedPosition }>;
}

/**
 * A page of the feed as list JSON (UTF-8 bytes). `nextCursor` is never null: after a full page, the position of its last event;
 * otherwise the head, the last position examined (events the filters skipped included), so resuming never reads
 * them again. With nothing to show and `waitMs`, waits for a commit (woken by the events signal, looking again each
 * second regardless) and holds no transaction while it waits.
 */
export async function feedPage(ctx: Context, req: FeedPageRequest): Promise<Buffer> {
  const { db, caps } = ctx.database;
  const pruned = await prunedThrough(ctx);
  if (req.after !== null && req.after !== 'now') refuseBelow(pruned, req.after);
  // Without a cursor the feed starts after what retention pruned: an event kept below it (a dead job still needs it)
  // is no longer in the feed, and a cursor pointing at it would be refused.
  const start = req.after ?? pruned ?? ORIGIN;
  const after = start === 'now' ? ((await readFeed(db, caps, { after: null, filter: req.filter, limit: 0, budget: 0 })).head ?? ORIGIN) : start;
  const ahead = req.readAhead ? await req.readAhead.pages.take(readAheadKey(after, req)) : null;
  if (ahead) req.readAhead!.pages.hits++;
  const { bytes, fullThrough } = ahead ?? (await readPage(ctx, after, req));
  if (fullThrough && req.readAhead) readAheadFrom(ctx, fullThrough, req, req.readAhead);
  return bytes;
}

/**
 * A page read for a request: waits (long-poll) while there is nothing to show. Each read that finds nothing has
 * examined every event up to the head it saw, none of which matched: the next read starts there, not at `after`
 * (SPEC §12), and while it waits the process's shared look (req.watch) examines on for it, so a long-poll on a
 * quiet collection beside a busy one reads again only when a matching event has committed (or its time is up).
 */
async function readPage(ctx: Context, after: FeedPosition, req: FeedPageRequest): Promise<PageBytes> {
  const { db, reads, caps } = ctx.database;
  const { clock } = ctx;
  const deadline = clock.now() + req.waitMs;
  const budget = req.maxBytes - PAGE_FRAME_MAX_BYTES;
  let from = after;
  let release: (() => void) | null = null;
  try {
    for (let first = true; ; first = false) {
      // One page read a turn among all requests: each read's statements run back to back (Kysely's connection lock
      // hands the main connection on in microtasks), so four clients paging through events of 3 KB held /healthz
      // 301 ms, a read and a read-ahead each. An idle loop turns in microseconds.
      await ownTurn();
      const joined = await readFeedPage(reads, caps, { after: from, filter: req.filter, limit: req.limit, budget }).catch((err: unknown) => {
        // A reader thread gives a statement SVC_QUERY_TIMEOUT_MS (sqlite-readers.ts); a page within its limit and budget
        // should never need it, but one on an overloaded machine is a 503, never a 500.
        if (caps.isQueryTimeout(err)) throw new AppError('query_timeout', 'Reading the page took longer than the query timeout; try again.');
        throw err;
      });
      if (first) await refuseUnissued(db, after, joined.head, 'after');
      if (joined.kept > 0 || clock.now() >= deadline || req.signal.aborted) return page(joined, from, req);
      from = laterOf(joined.head, from);
      release ??= req.holdWait?.() ?? null;
      if (req.watch) from = (await req.watch.until(req.filter, from, deadline - clock.now(), req.signal)).examined;
      else await req.waker.wait(Math.min(RECHECK_MS, deadline - clock.now()), req.signal);
    }
  } finally {
    release?.();
  }
}

/**
 * Once this full page is sent, reads the one after it (feed-read-ahead.ts); a page taken from the read-ahead starts
 * the next in turn. Only a full page is kept.
 */
function readAheadFrom(ctx: Context, from: FeedPosition, req: FeedPageRequest, readAhead: NonNullable<FeedPageRequest['readAhead']>): void {
  readAhead.whenSent(() =>
    readAhead.pages.start(readAheadKey(from, req), async () => {
      const { bytes, fullThrough } = await readPage(ctx, from, { ...req, waitMs: 0 });
      return fullThrough ? { bytes, fullThrough } : null;
    }),
  );
}

/** The pages a request may take from the read-ahead: the same position, limit and filters. */
const readAheadKey = (after: FeedPosition, req: FeedPageRequest): string =>
  JSON.stringify([after.tx, after.position, req.limit, req.maxBytes, req.filter.collections, req.filter.topics, req.filter.operational === true]);

/** A page's bytes, and when it is full (a next page may follow at once), the position of its last event. */
type PageBytes = Omit<FullPage, 'fullThrough'> & { fullThrough: FeedPosition | null };

/**
 * The page's list JSON around the items the database joined (feed-store.ts readFeedPage), in one buffer. Full when
 * the limit, the byte budget or a filtered read's scan bound (DialectCapabilities.feedScanRows) cut it: then its cursor is its last event,
 * else the head.
 */
function page(p: JoinedPage, after: FeedPosition, req: FeedPageRequest): PageBytes {
  const full = p.kept < p.read || p.read === req.limit || p.more;
  const next = full && p.last ? p.last : laterOf(p.head, after);
  const position = { tx: next.tx, position: next.position };
  const close = `${FRAME_CLOSE}${JSON.stringify(encodeFeedCursor(position))}}`;
  const bytes = Buffer.concat([OPEN_BYTES, p.items ?? Buffer.alloc(0), Buffer.from(close)]);
  return { bytes, fullThrough: full && p.last ? position : null };
}

/** The longest feed cursor (two signed 19-digit numbers) with the list frame around it: what a page spends besides its items. */
const PAGE_FRAME_MAX_BYTES = Buffer.byteLength(listJson([], encodeCursor('-9223372036854775808.-9223372036854775808')));
const OPEN_BYTES = Buffer.from(FRAME_OPEN);

/**
 * Every cursor handed out is at or below an event that still exists (retention always keeps the newest one): a
 * cursor beyond the newest event was made up, and resuming from it would skip every event up to it.
 *
 * The head a read returns (`head`, under the horizon) is not that bound, only a quick first check: on PostgreSQL it
 * can move back a little. The horizon leaves out other databases' transactions as pg_stat_activity lists them when
 * the statement reads it; one that ended after the statement's snapshot was taken is no longer listed, so it holds
 * that read's horizon below an earlier read's, and a cursor handed out a moment ago can be beyond the new head. Only
 * then is the newest event looked up.
 */
export async function refuseUnissued(db: Kysely<Tables>, after: FeedPosition, head: FeedPosition | null, parameter: string): Promise<void> {
  if (!beyond(after, head ?? ORIGIN)) return;
  if (beyond(after, (await newestFeedPosition(db)) ?? ORIGIN)) {
    throw new AppError('invalid_query', 'The cursor is not one this service issued.', { errors: [{ path: parameter, message: 'unknown cursor' }] });
  }
}

export const laterOf = (a: FeedPosition | null, b: FeedPosition): FeedPosition => (a !== null && beyond(a, b) ? a : b);

/**
 * Wakes this process's waiting feed readers when events commit: one subscription to the events signal for all of
 * them (on PostgreSQL one LISTEN connection), taken on first use and kept until close().
 */
export class FeedWaker {
  private readonly waiting = new Set<() => void>();
  private subscription: Promise<(() => Promise<void>) | null> | null = null;
  /** Counts wake-ups, so a reader that was busy reading when one came knows to read again at once. */
  wakeups = 0;

  constructor(private readonly ctx: Context) {}

  /** Subscribes to the events signal, once for all readers. */
  async ready(): Promise<void> {
    this.subscription ??= this.ctx.database.events
      .subscribe(() => {
        this.wakeups++;
        this.wakeAll();
      })
      .catch((err: unknown) => {
        this.ctx.logger.warn({ err }, 'feed wake-ups unavailable; long-polls look again every second');
        this.subscription = null;
        return null;
      });
    await this.subscription;
  }

  async wait(ms: number, signal: AbortSignal): Promise<void> {
    await this.ready();
    let done!: () => void;
    const woken = new Promise<void>((resolve) => (done = resolve));
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener('abort', done, { once: true });
    this.waiting.add(done);
    try {
      await woken;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      this.waiting.delete(done);
    }
  }

  private wakeAll(): void {
    for (const wake of [...this.waiting]) wake();
  }

  async close(): Promise<void> {
    this.wakeAll();
    const unsubscribe = await this.subscription;
    this.subscription = null;
    await unsubscribe?.();
  }
}

/** The highest position retention ever pruned (events/retention-store.ts), or null. */
async function prunedThrough(ctx: Context): Promise<FeedPosition | null> {
  const text = await getMeta(ctx.database.db, PRUNED_THROUGH_KEY);
  if (text === null) return null;
  const [tx, position] = text.split('.').map(Number) as [number, number];
  return { tx, position };
}

/**
 * A cursor before what is retained would silently skip the pruned events: it is 410 `cursor_expired` instead, and the
 * consumer re-reads current state and resumes with `after=now` (SPEC §7).
 */
function refuseBelow(pruned: FeedPosition | null, after: FeedPosition): void {
  if (pruned === null) return;
  if (after.tx < pruned.tx || (after.tx === pruned.tx && after.position < pruned.position)) {
    throw new AppError('cursor_expired', 'Events after this cursor were pruned: re-read current state, then resume with after=now.');
  }
}

/** The collections a feed request names, once each; null when it names none (a token's feed: what the token may read). */
export const namedCollections = (asked: readonly string[] | undefined): readonly string[] | null =>
  asked && asked.length > 0 ? [...new Set(asked)] : null;

/** A stream's check of its position against what retention has pruned (410 cursor_expired below it). */
export async function refuseExpired(ctx: Context, after: FeedPosition): Promise<void> {
  refuseBelow(await prunedThrough(ctx), after);
}
