import type { Context } from '../context.js';
import { nextTurn } from '../lib/turns.js';
import { laterOf, RECHECK_MS, type FeedWaker, type LongPollWatch } from './feed.js';
import { beyond, compareFeed, matchesFilter, readFeedPositions, type FeedFilter, type FeedPosition } from './feed-store.js';

/** The shared look reads at most this many events' positions per statement (and again at once when there were more). */
const LOOK_ROWS = 1000;

interface Waiter {
  filter: FeedFilter;
  /** The position this long-poll has examined through: nothing after it has been looked at for it yet. */
  from: FeedPosition;
  finish(matched: boolean): void;
}

/**
 * One look per process for every waiting long-poll (SPEC §12: they cost nothing while they wait). A poll whose
 * read found nothing waits here; on each wake-up (a commit, or every second) one statement reads what committed
 * since the oldest position any waiting poll has examined (positions, collections and topics: no payload), and
 * each poll either learns that a matching event is there (it then reads its page, from where it had examined) or
 * moves its examined position to where the look read through. So a commit costs one small read however many polls
 * wait, and no poll ever reads again what it (or the look for it) has examined.
 */
export class FeedWatch implements LongPollWatch {
  private readonly waiters = new Set<Waiter>();
  private running = false;
  /** Ends the look's wait early: a poll that just started waiting may have missed a wake-up. */
  private kick: AbortController | null = null;

  constructor(
    private readonly ctx: Context,
    private readonly waker: FeedWaker,
    private readonly closing: AbortSignal,
  ) {}

  until(filter: FeedFilter, from: FeedPosition, ms: number, signal: AbortSignal): Promise<{ matched: boolean; examined: FeedPosition }> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        filter,
        from,
        finish: (matched) => {
          if (!this.waiters.delete(waiter)) return;
          clearTimeout(timer);
          signal.removeEventListener('abort', gone);
          resolve({ matched, examined: waiter.from });
        },
      };
      const gone = () => waiter.finish(false);
      const timer = setTimeout(gone, Math.max(0, ms));
      signal.addEventListener('abort', gone, { once: true });
      this.waiters.add(waiter);
      if (signal.aborted) return gone();
      this.kick?.abort();
      if (!this.running) void this.run();
    });
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      await this.waker.ready();
      while (this.waiters.size > 0 && !this.closing.aborted) {
        const seen = this.waker.wakeups;
        this.kick = new AbortController();
        try {
          await this.look();
        } catch (err) {
          this.ctx.logger.warn({ err }, 'long-polls: looking for new events failed; trying again');
        }
        if (this.waiters.size === 0) break;
        // A wake-up (or a new poll) that came while looking means more may be there: look again at once.
        if (this.waker.wakeups === seen && !this.kick.signal.aborted) await this.waker.wait(RECHECK_MS, AbortSignal.any([this.closing, this.kick.signal]));
      }
    } finally {
      this.running = false;
      this.kick = null;
    }
  }

  /**
   * Reads from the oldest position the waiting polls have examined, for those waiting when it began; a poll that
   * starts waiting meanwhile is looked at in the next round (it may have examined less than where this one starts).
   */
  private async look(): Promise<void> {
    const { db, caps } = this.ctx.database;
    for (;;) {
      const batch = [...this.waiters];
      if (batch.length === 0) return;
      const after = batch.map((w) => w.from).reduce((a, b) => (compareFeed(a, b) <= 0 ? a : b));
      const { rows, head, full } = await readFeedPositions(db, caps, { after, limit: LOOK_ROWS });
      const through = full ? rows.at(-1)! : laterOf(head, after);
      for (const w of batch) {
        if (!this.waiters.has(w)) continue;
        if (rows.some((r) => beyond(r, w.from) && matchesFilter(w.filter, r))) w.finish(true);
        else w.from = laterOf(through, w.from);
      }
      if (!full) return;
      // A poll that examined little of a long feed (200,000 events behind the head) takes many reads: one a turn.
      await nextTurn();
    }
  }
}
