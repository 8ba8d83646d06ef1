import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ORIGIN } from '../../src/events/feed.js';
import { matchesFilter, readFeed, readFeedPage, type FeedFilter, type FeedPosition } from '../../src/events/feed-store.js';
import { OPERATIONAL_COLLECTION } from '../../src/lib/ids.js';
import { createPlanTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { seedFeedEvents } from '../helpers/feed-seed.js';
import { StatementLog } from '../helpers/statement-log.js';

/**
 * A feed read filtered by topic and no collection seeks each topic's events through `events_topic_feed` (migration
 * 025) instead of walking the whole feed from its cursor. Before, `topic=delivery.dead` beside 200,000 events walked
 * all of them to find none (300–380 ms a read on SQLite, 270–340 ms on PostgreSQL), and a topic of one event in 1,000
 * answered one event a page on SQLite. Here 20,000 `record.created` events of `busy` (odd positions), 20
 * `record.deleted` of `busy` (2, 2002, …), 20 operational `delivery.dead` (4, 2004, …) and 20 `record.created` of
 * `quiet` (6, 2006, …).
 */
const BUSY = 20_000;
const QUIET = 20;
const STEP = 2000;
const BUDGET = 16 * 1024 * 1024;

type Db = TestContext['ctx']['database']['db'];

describe.each(DIALECTS)('feed reads of a few topics use their own index (%s)', (dialect) => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  async function seeded(): Promise<TestContext> {
    t = await createPlanTestContext(dialect);
    const { db } = t.ctx.database;
    const { tx } = await seedFeedEvents(db, dialect, { count: BUSY, collection: 'busy', first: 1, step: 2 });
    await seedFeedEvents(db, dialect, { count: QUIET, collection: 'busy', first: 2, step: STEP, tx });
    await seedFeedEvents(db, dialect, { count: QUIET, collection: OPERATIONAL_COLLECTION, first: 4, step: STEP, tx });
    await seedFeedEvents(db, dialect, { count: QUIET, collection: 'quiet', first: 6, step: STEP, tx });
    const retopic = (topic: string, where: ReturnType<typeof sql>) =>
      sql`update events set topic = ${topic}, json_prefix = replace(json_prefix, '"topic":"record.created"', ${`"topic":"${topic}"`}) where ${where}`.execute(db);
    await retopic('record.deleted', sql`collection = 'busy' and position % ${STEP} = 2`);
    await retopic('delivery.dead', sql`collection = ${OPERATIONAL_COLLECTION}`);
    // On PostgreSQL events lie in many transactions, as writes put them: the planner estimates the events after a
    // cursor from the histogram of `tx`. All at one tx, it estimated none after any cursor and walked the feed from it.
    if (dialect === 'postgres') await sql`update events set tx = 1 + position / 100`.execute(db);
    if (dialect === 'postgres') await sql`analyze events`.execute(db);
    return t;
  }

  /** Each statement a read ran over `events` that names a topic, and its plan. */
  async function statementsOf(context: TestContext, read: (db: Db) => Promise<unknown>): Promise<Array<{ sql: string; plan: string }>> {
    const log = new StatementLog();
    const db = context.ctx.database.db.withPlugin(log);
    await read(db);
    const executor = db.getExecutor();
    const statements = log.nodes.map((node, i) => executor.compileQuery(node, { queryId: `q${i}` } as never)).filter((q) => /\btopic (=|in)/.test(q.sql));
    expect(statements.length).toBeGreaterThan(0);
    const explain = dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
    const plans: Array<{ sql: string; plan: string }> = [];
    for (const q of statements) {
      const { rows } = await context.ctx.database.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain + q.sql, [...q.parameters]));
      plans.push({ sql: q.sql, plan: rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n') });
    }
    return plans;
  }

  /** Every event of the feed, as an unfiltered read serves it: its position, collection, topic and bytes. */
  async function wholeFeed(context: TestContext): Promise<Array<{ at: FeedPosition; collection: string; topic: string; json: string }>> {
    const { reads, caps } = context.ctx.database;
    const all: Array<{ at: FeedPosition; collection: string; topic: string; json: string }> = [];
    for (let after: FeedPosition = ORIGIN; ; ) {
      const { rows, full } = await readFeed(reads, caps, { after, filter: { collections: null, topics: null, operational: true }, limit: 1000, budget: BUDGET });
      all.push(...rows.map((r) => ({ at: { tx: r.tx, position: r.position }, collection: r.collection, topic: r.topic, json: r.json })));
      if (!full) return all;
      after = all.at(-1)!.at;
    }
  }

  /** A filter's whole answer, page by page (`limit` events each), as feed.ts pages: from the last event of a full page. */
  async function pages(db: Db, context: TestContext, filter: FeedFilter, limit: number): Promise<{ json: string[]; reads: number }> {
    const { caps } = context.ctx.database;
    const json: string[] = [];
    let reads = 0;
    for (let after: FeedPosition = ORIGIN; ; ) {
      const page = await readFeedPage(db, caps, { after, filter, limit, budget: BUDGET });
      reads++;
      if (page.items !== null) json.push(...(JSON.parse(`[${page.items.toString()}]`) as unknown[]).map((e) => JSON.stringify(e)));
      if (!(page.kept < page.read || page.read === limit || page.more) || page.last === null) return { json, reads };
      after = page.last;
    }
  }

  const seeks = (plan: string) => {
    if (dialect === 'sqlite') {
      expect(plan).toMatch(/SEARCH events USING (COVERING )?INDEX events_topic_feed \(topic=\?/);
      expect(plan).not.toMatch(/SCAN events/);
    } else {
      expect(plan).toMatch(/events_topic_feed/);
      expect(plan).not.toMatch(/Seq Scan on events/);
    }
  };

  for (const topics of [['record.deleted'], ['record.deleted', 'delivery.dead'], ['delivery.dead', 'delivery.dead']]) {
    it(`${topics.join(' and ')}: every statement naming them seeks events_topic_feed, and one read finds all their events in feed order, byte for byte`, async () => {
      const context = await seeded();
      const { caps } = context.ctx.database;
      const filter: FeedFilter = { collections: null, topics, operational: true };
      const found: Array<Awaited<ReturnType<typeof readFeedPage>>> = [];
      const statements = await statementsOf(context, async (db) => found.push(await readFeedPage(db, caps, { after: ORIGIN, filter, limit: 1000, budget: BUDGET })));
      // One read reaches the head: before, SQLite walked 40,060 positions in slices of 1,024 (40 bounds and reads).
      expect(found[0]!.more).toBe(false);
      // The scan bound and the page: one slice (SQLite; PostgreSQL reads without slices).
      if (dialect === 'sqlite') expect(statements).toHaveLength(2);
      for (const { plan } of statements) seeks(plan);
      // Exactly the events an unfiltered read serves that match, in its order, with the same bytes.
      const want = (await wholeFeed(context)).filter((e) => matchesFilter(filter, e));
      expect(want).toHaveLength(topics.includes('record.deleted') ? QUIET * (new Set(topics).size) : QUIET);
      expect(found[0]!.items!.toString()).toBe(want.map((e) => e.json).join(','));
      // The rows the streams read too (readFeed), from the middle of the feed.
      const whole = await wholeFeed(context);
      const middle = whole.find((e) => e.at.position === BUSY + 1)!.at;
      const rows = await readFeed(context.ctx.database.db, caps, { after: middle, filter, limit: 1000, budget: BUDGET });
      expect(rows.rows.map((r) => r.json)).toEqual(want.filter((e) => e.at.position > BUSY + 1).map((e) => e.json));
    }, 120_000);
  }

  it('paging a topic by a few events at a time: each page one seek and one read, every event once, in order', async () => {
    const context = await seeded();
    const filter: FeedFilter = { collections: null, topics: ['record.deleted'], operational: false };
    const want = (await wholeFeed(context)).filter((e) => matchesFilter(filter, e)).map((e) => JSON.stringify(JSON.parse(e.json)));
    let reads = 0;
    const statements = await statementsOf(context, async (db) => {
      const read = await pages(db, context, filter, 7);
      expect(read.json).toEqual(want);
      reads = read.reads;
    });
    // 20 events by 7: three pages, the last at the head (before, SQLite answered 1 event a slice: 20 pages and more).
    expect(reads).toBe(3);
    if (dialect === 'sqlite') expect(statements).toHaveLength(2 * reads);
    for (const { plan } of statements) seeks(plan);
  }, 120_000);

  it('the public feed never shows an operational topic; with a record topic beside it, only that topic', async () => {
    const context = await seeded();
    const { db, caps } = context.ctx.database;
    const none = await readFeedPage(db, caps, { after: ORIGIN, filter: { collections: null, topics: ['delivery.dead'], operational: false }, limit: 100, budget: BUDGET });
    expect(none.kept).toBe(0);
    expect(none.more).toBe(false);
    const filter: FeedFilter = { collections: null, topics: ['delivery.dead', 'record.deleted'], operational: false };
    const want = (await wholeFeed(context)).filter((e) => matchesFilter(filter, e));
    expect(want.every((e) => e.topic === 'record.deleted')).toBe(true);
    expect((await pages(db, context, filter, 1000)).json).toEqual(want.map((e) => JSON.stringify(JSON.parse(e.json))));
  }, 120_000);

  it('a topic beside a collection: the read seeks the collection, whose index bounds its slices, and finds what both name', async () => {
    const context = await seeded();
    const { caps } = context.ctx.database;
    for (const [collections, topics, count] of [
      // A quiet collection and a common topic: one slice of quiet's events (SQLite), not a walk of record.created's.
      [['quiet'], ['record.created'], QUIET],
      [['busy'], ['record.deleted'], QUIET],
      [['quiet', 'busy'], ['record.deleted', 'record.updated'], QUIET],
    ] as const) {
      const filter: FeedFilter = { collections, topics, operational: false };
      const want = (await wholeFeed(context)).filter((e) => matchesFilter(filter, e));
      expect(want).toHaveLength(count);
      const log = new StatementLog();
      const db = context.ctx.database.db.withPlugin(log);
      expect((await pages(db, context, filter, 1000)).json).toEqual(want.map((e) => JSON.stringify(JSON.parse(e.json))));
      if (dialect === 'sqlite' && collections.length === 1 && collections[0] === 'quiet') {
        expect(log.nodes).toHaveLength(2);
        const plans = await statementsOf(context, (d) => readFeedPage(d, caps, { after: ORIGIN, filter, limit: 1000, budget: BUDGET }));
        for (const { plan } of plans) {
          expect(plan).toMatch(/SEARCH events USING (COVERING )?INDEX events_collection_feed \(collection=\?/);
          expect(plan).not.toMatch(/events_topic_feed/);
        }
      }
    }
  }, 120_000);
});
