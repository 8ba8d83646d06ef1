/**
 * Catch-up read-ahead for the feed's pages. A reader catching up asks for page after page; between two requests
 * svc sat idle while the client received and parsed the last page (in W9 about half of each round trip). After a full
 * page, the next one (from its last event, same filters and limit) is read while the previous one travels, and the
 * next request takes it if it asks for exactly that.
 *
 * Why a page read ahead is the page a fresh read would return: only full pages are kept, and a full page's events are
 * all below the horizon it was read under, where no event can commit later (feed-store.ts); events sort by (tx,
 * position), so a later read under a higher horizon finds the same first events. Retention deletes only events at or
 * below the position it records as pruned, and a request whose cursor is below that is refused before the read-ahead
 * is looked at. A page that was not full is dropped: events may commit after it.
 *
 * Bounded: at most MAX_PAGES pages (each within SVC_LIST_MAX_BYTES) wait, each for at most TTL_MS; beyond that no
 * page is read ahead.
 */
import type { Clock } from '../lib/clock.js';
import type { FeedPosition } from './feed-store.js';

/** A full page's bytes and the position of its last event (where the page after it starts). */
export interface FullPage {
  bytes: Buffer;
  fullThrough: FeedPosition;
}

export class FeedReadAhead {
  static readonly MAX_PAGES = 8;
  static readonly TTL_MS = 10_000;
  private readonly pages = new Map<string, { page: Promise<FullPage | null>; expires: number }>();
  /** Counts pages served from the read-ahead (tests, metrics). */
  hits = 0;

  constructor(private readonly clock: Clock) {}

  /** The page read ahead under this key, if any (it may still be reading); removed, since a page is taken once. */
  take(key: string): Promise<FullPage | null> | null {
    const entry = this.pages.get(key);
    if (!entry) return null;
    this.pages.delete(key);
    return entry.expires > this.clock.now() ? entry.page : null;
  }

  /** Reads a page ahead under this key; `read` answers null for a page that is not to be kept (not full). */
  start(key: string, read: () => Promise<FullPage | null>): void {
    const now = this.clock.now();
    for (const [k, entry] of this.pages) if (entry.expires <= now) this.pages.delete(k);
    if (this.pages.size >= FeedReadAhead.MAX_PAGES || this.pages.has(key)) return;
    // A failed read ahead (a closing pool) is no page: the request reads for itself and sees the error, if any.
    this.pages.set(key, { page: read().catch(() => null), expires: now + FeedReadAhead.TTL_MS });
  }

  clear(): void {
    this.pages.clear();
  }
}
