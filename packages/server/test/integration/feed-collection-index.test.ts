import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ORIGIN } from '../../src/events/feed.js';
import { readFeed, readFeedPage, type FeedFilter } from '../../src/events/feed-store.js';
import { createPlanTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { seedFeedEvents } from '../helpers/feed-seed.js';
import { StatementLog } from '../helpers/statement-log.js';

/**
 * A feed read filtered to a few collections seeks each collection's events through `events_collection_feed`
 * (migration 024) instead of walking the whole feed from its cursor. Outside review: `collection=quiet` over 287,000
 * events of another collection walked all of them to find none, 0.73 s on SQLite a read, and 100 long-polls on the
 * quiet collection answered a write 28 s late. Here 20,000 events of `busy` (odd positions) and 20 of each quiet
 * collection among them: every statement of a filtered read that names a collection must use that index, and the
 * read must find exactly the quiet events, in feed order, in one slice rather than twenty.
 */
const BUSY = 20_000;
const QUIET = 20;
const STEP = 2000;

describe.each(DIALECTS)('feed reads of a few collections use their own index (%s)', (dialect) => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  async function seeded(): Promise<TestContext> {
    t = await createPlanTestContext(dialect);
    const { db } = t.ctx.database;
    const { tx } = await seedFeedEvents(db, dialect, { count: BUSY, collection: 'busy', first: 1, step: 2 });
    // quiet_a at positions 2, 2002, …; quiet_b at 4, 2004, …: interleaved with each other and with the busy ones.
    await seedFeedEvents(db, dialect, { count: QUIET, collection: 'quiet_a', first: 2, step: STEP, tx });
    await sql`update events set record_id = replace(record_id, 'rec_seed', 'rec_seea'), json_prefix = replace(json_prefix, 'rec_seed', 'rec_seea') where collection = 'quiet_a'`.execute(db);
    await seedFeedEvents(db, dialect, { count: QUIET, collection: 'quiet_b', first: 4, step: STEP, tx });
    if (dialect === 'postgres') await sql`analyze events`.execute(db);
    return t;
  }

  /** Each statement a read ran over `events` with a collection in it, and its plan. */
  async function plansOf(context: TestContext, read: (db: TestContext['ctx']['database']['db']) => Promise<unknown>): Promise<string[]> {
    return (await statementsOf(context, read)).map((s) => s.plan);
  }

  async function statementsOf(context: TestContext, read: (db: TestContext['ctx']['database']['db']) => Promise<unknown>): Promise<Array<{ sql: string; plan: string }>> {
    const log = new StatementLog();
    const db = context.ctx.database.db.withPlugin(log);
    await read(db);
    const executor = db.getExecutor();
    const statements = log.nodes.map((node, i) => executor.compileQuery(node, { queryId: `q${i}` })).filter((q) => /\bcollection (=|in)/.test(q.sql));
    expect(statements.length).toBeGreaterThan(0);
    const explain = dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
    const plans: Array<{ sql: string; plan: string }> = [];
    for (const q of statements) {
      const { rows } = await context.ctx.database.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain + q.sql, [...q.parameters]));
      plans.push({ sql: q.sql, plan: rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n') });
    }
    return plans;
  }

  const recordPositions = (json: string): number[] => (JSON.parse(`[${json}]`) as Array<{ id: string }>).map((e) => Number(e.id.slice('evt_seed'.length)));
  const recordIds = (json: string): string[] => (JSON.parse(`[${json}]`) as Array<{ recordId: string }>).map((e) => e.recordId);
  const expected = (prefix: string) => Array.from({ length: QUIET }, (_, i) => `${prefix}${String(i).padStart(12, '0')}`);

  for (const collections of [['quiet_a'], ['quiet_a', 'quiet_b']]) {
    it(`${collections.join(' and ')}: every statement naming them seeks events_collection_feed, and one read finds all their events in order`, async () => {
      const context = await seeded();
      const { caps } = context.ctx.database;
      const filter: FeedFilter = { collections, topics: null };
      const pages: Array<Awaited<ReturnType<typeof readFeedPage>>> = [];
      const plans = await plansOf(context, async (db) => pages.push(await readFeedPage(db, caps, { after: ORIGIN, filter, limit: 1000, budget: 16 * 1024 * 1024 })));
      const read = pages[0]!;
      // One read reaches the head: before, SQLite walked 40,000 positions in slices of 1,024 (40 bounds and reads).
      expect(read.more).toBe(false);
      const want = collections.length === 1 ? expected('rec_seea') : interleave(expected('rec_seea'), expected('rec_seed'));
      expect(recordIds(read.items!.toString())).toEqual(want);
      // The scan bound and the page: one slice (SQLite; PostgreSQL reads without slices).
      if (dialect === 'sqlite') expect(plans).toHaveLength(2);
      for (const plan of plans) {
        if (dialect === 'sqlite') {
          expect(plan).toMatch(/SEARCH events USING (COVERING )?INDEX events_collection_feed \(collection=\?/);
          expect(plan).not.toMatch(/SCAN events/);
        } else {
          expect(plan).toMatch(/events_collection_feed/);
          expect(plan).not.toMatch(/Seq Scan on events/);
        }
      }
      // The rows the streams read too (readFeed), from the middle of the feed.
      const rows = await readFeed(context.ctx.database.db, caps, { after: { tx: read.last!.tx, position: 10_000 }, filter, limit: 1000, budget: 16 * 1024 * 1024 });
      expect(rows.rows.map((r) => r.collection).every((c) => collections.includes(c))).toBe(true);
      expect(rows.rows.map((r) => r.position)).toEqual(want.map((_, i) => positionOf(collections, i)).filter((p) => p > 10_000));
    }, 120_000);
  }

  it.runIf(dialect === 'sqlite')('a slice of a busy and a quiet collection holds at most feedScanRows of their events together (SQLite sorts them)', async () => {
    const context = await seeded();
    const { caps } = context.ctx.database;
    const rows = caps.feedScanRows!;
    const page = await readFeedPage(context.ctx.database.db, caps, { after: ORIGIN, filter: { collections: ['busy', 'quiet_a'], topics: null }, limit: 1000, budget: 16 * 1024 * 1024 });
    // Each collection's share is rows / 2: the slice ends at busy's 512th event (position 1,023), which holds it and
    // quiet_a's first (position 2). With `rows` of each, the page would have held 1,000 of 2,047 positions' events.
    const share = rows / 2;
    expect(page.more).toBe(true);
    expect(page.last).toEqual({ tx: 0, position: 2 * share - 1 });
    expect(page.kept).toBe(share + 1);
  }, 120_000);

  it.runIf(dialect === 'sqlite')('a read of several collections sorts their positions alone, then reads only the events it keeps', async () => {
    const context = await seeded();
    const { caps } = context.ctx.database;
    // SQLite takes events_collection_feed for any `collection in (…)` and sorts what the slice holds. Sorting the rows
    // built every event's JSON first: a page of 1,000 of 16 busy collections took 43 ms, 13 ms sorting positions.
    const many = ['busy', 'quiet_a', ...Array.from({ length: 15 }, (_, i) => `none_${i}`)];
    for (const collections of [['busy', 'quiet_a'], many]) {
      const filter: FeedFilter = { collections, topics: null };
      const out: { page?: Awaited<ReturnType<typeof readFeedPage>>; rows?: Awaited<ReturnType<typeof readFeed>> } = {};
      const statements = await statementsOf(context, async (db) => {
        out.page = await readFeedPage(db, caps, { after: ORIGIN, filter, limit: 1000, budget: 16 * 1024 * 1024 });
        out.rows = await readFeed(db, caps, { after: { tx: 0, position: 100 }, filter, limit: 200, budget: 16 * 1024 * 1024 });
      });
      const reads = statements.filter((s) => s.sql.includes('json_prefix'));
      expect(reads).toHaveLength(2);
      for (const { plan } of reads) {
        const lines = plan.split('\n');
        const sorts = lines.flatMap((line, i) => (line.includes('TEMP B-TREE') ? [lines[i - 1]!] : []));
        expect(sorts).toEqual([expect.stringMatching(/^SEARCH events USING COVERING INDEX events_collection_feed \(collection=\?/)]);
        expect(plan).toMatch(/SEARCH events USING INDEX events_feed \(tx=\? AND position=\?\)/);
      }
      // The events themselves, in feed order: busy's odd positions and quiet_a's first, up to the slice's end (two
      // collections: busy's share, feedScanRows / 2; more than COLLECTION_SEEKS: feedScanRows events of the feed).
      const pageEnd = collections.length === 2 ? caps.feedScanRows! - 1 : 2 * caps.feedScanRows!;
      const wanted = (from: number, to: number, n: number) =>
        Array.from({ length: to - from }, (_, i) => from + 1 + i).filter((p) => p % 2 === 1 || p === 2).slice(0, n);
      expect(recordPositions(out.page!.items!.toString())).toEqual(wanted(0, pageEnd, 1000));
      expect(out.rows!.rows.map((r) => r.position)).toEqual(wanted(100, 100 + 2 * caps.feedScanRows!, 200));
    }
  }, 120_000);

  it('a collection with no events after the cursor answers empty at the head after one seek', async () => {
    const context = await seeded();
    const { caps } = context.ctx.database;
    const pages: Array<Awaited<ReturnType<typeof readFeedPage>>> = [];
    const plans = await plansOf(context, async (db) => pages.push(await readFeedPage(db, caps, { after: ORIGIN, filter: { collections: ['nobody'], topics: null }, limit: 1000, budget: 1024 * 1024 })));
    expect(pages[0]!.kept).toBe(0);
    expect(pages[0]!.more).toBe(false);
    expect(pages[0]!.head).toEqual({ tx: dialect === 'sqlite' ? 0 : 1, position: BUSY * 2 - 1 });
    if (dialect === 'sqlite') expect(plans).toHaveLength(2);
  }, 120_000);
});

/** Positions of the i-th event of the merged quiet collections (quiet_a at 2 + k·STEP, quiet_b at 4 + k·STEP). */
function positionOf(collections: string[], i: number): number {
  if (collections.length === 1) return 2 + i * STEP;
  const k = Math.floor(i / 2);
  return (i % 2 === 0 ? 2 : 4) + k * STEP;
}

function interleave(a: string[], b: string[]): string[] {
  return a.flatMap((x, i) => [x, b[i]!]);
}
