import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { iso } from '../lib/clock.js';
import { getMeta } from '../db/meta-store.js';
import { decodeCursor, encodeCursor, listJson } from '../lib/cursor.js';
import { readFeed, type FeedFilter, type FeedPosition, type FeedRow } from './feed-store.js';
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
  const text = decodeCursor(raw, /^-?\d{1,19}\.-?\d{1,19}$/, parameter);
  if (text === null) return null;
  const [tx, position] = text.split('.').map(Number) as [number, number];
  return { tx, position };
}

/** An event as the feed shows it, spliced around its stored payload text (the webhook envelope's payload, byte for byte). */
export const eventJson = (r: FeedRow): string =>
  `{"id":${JSON.stringify(r.id)},"topic":${JSON.stringify(r.topic)},"collection":${JSON.stringify(r.collection)},"recordId":${JSON.stringify(r.record_id)},"occurredAt":"${iso(r.created_at)}","payload":${r.payload}}`;

export interface FeedPageRequest {
  after: FeedPosition | 'now' | null;
  filter: FeedFilter;
  limit: number;
  waitMs: number;
  maxBytes: number;
  /** Aborted when the server closes: a long-poll answers at once with what it has. */
  signal: AbortSignal;
  waker: FeedWaker;
}

/**
 * A page of the feed as list JSON. `nextCursor` is never null: after a full page, the position of its last event;
 * otherwise the head, the last position examined (events the filters skipped included), so resuming never reads
 * them again. With nothing to show and `waitMs`, waits for a commit (woken by the events signal, looking again each
 * second regardless) and holds no transaction while it waits.
 */
export async function feedPage(ctx: Context, req: FeedPageRequest): Promise<string> {
  const { db, caps } = ctx.database;
  const pruned = await prunedThrough(ctx);
  if (req.after !== null && req.after !== 'now') refuseBelow(pruned, req.after);
  // Without a cursor the feed starts after what retention pruned: an event kept below it (a dead job still needs it)
  // is no longer in the feed, and a cursor pointing at it would be refused.
  const start = req.after ?? pruned ?? ORIGIN;
  const after = start === 'now' ? ((await readFeed(db, caps, { after: null, filter: req.filter, limit: 0 })).head ?? ORIGIN) : start;
  const deadline = Date.now() + req.waitMs;
  for (;;) {
    const { rows, head } = await readFeed(db, caps, { after, filter: req.filter, limit: req.limit });
    if (rows.length > 0 || Date.now() >= deadline || req.signal.aborted) return page(rows, head, after, req);
    await req.waker.wait(Math.min(RECHECK_MS, deadline - Date.now()), req.signal);
  }
}

function page(rows: readonly FeedRow[], head: FeedPosition | null, after: FeedPosition, req: FeedPageRequest): string {
  const items: string[] = [];
  // The frame and a cursor of the longest kind.
  let bytes = 64;
  for (const row of rows) {
    const text = eventJson(row);
    if (items.length > 0 && bytes + text.length + 1 > req.maxBytes) break;
    items.push(text);
    bytes += Buffer.byteLength(text) + 1;
  }
  const full = items.length < rows.length || rows.length === req.limit;
  const last = items.length > 0 ? rows[items.length - 1]! : null;
  const next = full && last ? last : laterOf(head, after);
  return listJson(items, encodeFeedCursor({ tx: next.tx, position: next.position }));
}

export const laterOf = (a: FeedPosition | null, b: FeedPosition): FeedPosition =>
  a !== null && (a.tx > b.tx || (a.tx === b.tx && a.position > b.position)) ? a : b;

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

/** What a token may read: its collections, narrowed by the request's; naming one outside them is forbidden (SPEC §3). */
export function feedCollections(tokenCollections: readonly string[] | null, asked: readonly string[] | undefined): readonly string[] | null {
  if (!asked || asked.length === 0) return tokenCollections;
  if (tokenCollections !== null && asked.some((c) => !tokenCollections.includes(c))) {
    throw new AppError('forbidden', 'This token may not read events of that collection.');
  }
  return [...new Set(asked)];
}

/** A stream's check of its position against what retention has pruned (410 cursor_expired below it). */
export async function refuseExpired(ctx: Context, after: FeedPosition): Promise<void> {
  refuseBelow(await prunedThrough(ctx), after);
}
