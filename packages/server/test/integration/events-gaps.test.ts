import { afterEach, describe, expect, it } from 'vitest';
import { decodeFeedCursor, feedPage, FeedWaker } from '../../src/events/feed.js';
import { FeedReadAhead } from '../../src/events/feed-read-ahead.js';
import { createOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { systemClock } from '../../src/lib/clock.js';

const WRITERS = 8;
const WRITES_EACH = 25;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The feed's promise (SPEC §7): a reader that has seen position p never later finds an event before p. Writers here
 * commit out of the order they began: some hold their transaction open after writing their event, so on PostgreSQL
 * a later-begun transaction commits first. A reader polls as fast as it can; at the end it has seen every committed
 * event exactly once, and nothing of the rolled-back ones.
 */
describe.each(DIALECTS)('the feed under concurrent writers (%s)', (dialect) => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it('8 writers committing out of order, a reader polling: every committed event seen once, in one order', async () => {
    t = await createTestContext(dialect);
    const { ctx } = t;
    const outbox = createOutbox(ctx.database, ctx.logger, null);
    const committed = new Set<string>();
    const rolledBack = new Set<string>();
    let writing = true;

    const writer = async (w: number) => {
      for (let i = 0; i < WRITES_EACH; i++) {
        const hold = (w + i) % 3 === 0 ? 5 + ((w * 7 + i * 13) % 25) : 0;
        const rollback = (w * 31 + i) % 17 === 0;
        let eventId = '';
        try {
          await ctx.database.db.transaction().execute(async (trx) => {
            const now = ctx.clock.now();
            const e = await outbox.enqueue(trx, { topic: 'record.created', collection: 'issues', recordId: `rec_w${w}i${i}`, payload: { w, i, occurredAt: new Date(now).toISOString() } }, now);
            eventId = e.eventId;
            // Held open after the event is written: transactions that began later commit first meanwhile.
            if (hold > 0) await sleep(hold);
            if (rollback) throw new Error('rolled back on purpose');
          });
          committed.add(eventId);
        } catch {
          rolledBack.add(eventId);
        }
      }
    };

    const seen: string[] = [];
    // A second reader takes full pages read ahead (events/feed-read-ahead.ts) whenever it can: the same promise holds.
    const seenAhead: string[] = [];
    const readAhead = { pages: new FeedReadAhead(systemClock), whenSent: (start: () => void) => start() };
    const reader = async (seen: string[], ahead: boolean) => {
      let cursor: string | undefined;
      const waker = new FeedWaker(ctx);
      const pass = async () => {
        const req = { after: decodeFeedCursor(cursor), filter: { collections: null, topics: null }, limit: 7, waitMs: 0, maxBytes: 1 << 20, signal: new AbortController().signal, waker };
        const page = JSON.parse((await feedPage(ctx, ahead ? { ...req, readAhead } : req)).toString('utf8')) as { items: Array<{ id: string }>; nextCursor: string };
        seen.push(...page.items.map((e) => e.id));
        cursor = page.nextCursor;
        return page.items.length;
      };
      while (writing) await pass();
      // Drain what the last commits left.
      while ((await pass()) > 0);
      await waker.close();
    };

    const reading = Promise.all([reader(seen, false), reader(seenAhead, true)]);
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    writing = false;
    await reading;

    expect(committed.size + rolledBack.size).toBe(WRITERS * WRITES_EACH);
    expect(rolledBack.size).toBeGreaterThan(0);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...committed].sort());
    expect(seenAhead).toEqual(seen);
    console.log(`[feed-gaps ${dialect}] writers=${WRITERS} committed=${committed.size} rolled back=${rolledBack.size} seen=${seen.length} duplicates=${seen.length - new Set(seen).size} missed=${[...committed].filter((id) => !seen.includes(id)).length}`);
  });
});
