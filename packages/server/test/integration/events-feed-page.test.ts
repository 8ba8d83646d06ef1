import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { putMetaAtLeast } from '../../src/db/meta-store.js';
import { decodeFeedCursor, feedPage, FeedWaker, PRUNED_THROUGH_KEY, type FeedPageRequest } from '../../src/events/feed.js';
import { FeedReadAhead } from '../../src/events/feed-read-ahead.js';
import type { FeedPosition } from '../../src/events/feed-store.js';
import { prunedThroughText } from '../../src/events/retention-store.js';
import { OPERATIONAL_COLLECTION } from '../../src/lib/ids.js';
import { createOutbox } from '../../src/webhooks/outbox.js';
import type { EventInput } from '../../src/webhooks/envelope.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { systemClock } from '../../src/lib/clock.js';

/**
 * A feed page is spliced as bytes around each event's stored payload text (events/feed.ts), and full pages are read
 * ahead (events/feed-read-ahead.ts). Both must give exactly the page built from objects with JSON.stringify.
 */
describe.each(DIALECTS)('feed pages as bytes (%s)', (dialect) => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  const write = async (events: EventInput[]) => {
    const { ctx } = t!;
    const outbox = createOutbox(ctx.database, ctx.logger, null);
    for (const event of events) await ctx.database.db.transaction().execute((trx) => outbox.enqueue(trx, event, ctx.clock.now()));
    await readable();
  };
  /**
   * Until every stored event is under the feed's horizon. On PostgreSQL a committed event waits above it while an
   * older transaction may still commit; a transaction of another test's database that ends between the read's
   * snapshot and its look at pg_stat_activity holds it too, for one read (docs/event-feed.md). The tests below compare
   * whole pages, so they start once everything is readable.
   */
  const readable = async () => {
    const db = t!.ctx.database.db;
    const { rows } = await sql<{ n: number }>`select count(*) as n from events where position is not null`.execute(db);
    const stored = Number(rows[0]!.n);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const page = JSON.parse((await feedPage(t!.ctx, request(undefined, { filter: { collections: null, topics: null, operational: true } }))).toString('utf8')) as { items: unknown[] };
      if (page.items.length === stored) return;
      if (Date.now() > deadline) throw new Error(`the feed shows ${page.items.length} of ${stored} stored events after 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const request = (cursor: string | undefined, over: Partial<FeedPageRequest> = {}): FeedPageRequest => ({
    after: decodeFeedCursor(cursor),
    filter: { collections: null, topics: null },
    limit: 1000,
    waitMs: 0,
    maxBytes: 1 << 20,
    signal: new AbortController().signal,
    waker: new FeedWaker(t!.ctx),
    ...over,
  });
  /** The page as JSON.stringify would write it, from the stored rows, in feed order (public feed: no `_svc`). */
  const expectedPage = async (nextCursor: string) => {
    const { rows } = await sql<{ id: string; topic: string; collection: string; record_id: string; created_at: number; payload: string }>`
      select id, topic, collection, record_id, created_at, payload from events
       where position is not null and collection <> ${OPERATIONAL_COLLECTION} order by tx, position`.execute(t!.ctx.database.db);
    const items = rows.map((r) => ({ id: r.id, topic: r.topic, collection: r.collection, recordId: r.record_id, occurredAt: new Date(Number(r.created_at)).toISOString(), payload: JSON.parse(r.payload) }));
    return JSON.stringify({ items, nextCursor });
  };

  it('equals the page built from objects: unicode, escapes, a deleted record, operational events left out', async () => {
    t = await createTestContext(dialect);
    const tricky = 'héllo wörld ✓ 😀 \u2028\u2029 "quoted" back\\slash tab\t newline\n \u0001\u001f \ud800 lone';
    const inputs: EventInput[] = [
      { topic: 'record.created', collection: 'issues', recordId: 'rec_a', payload: { record: { id: 'rec_a', data: { title: tricky, n: 1.5, list: [null, true] } } } },
      { topic: 'delivery.dead', collection: OPERATIONAL_COLLECTION, recordId: 'job_x', payload: { job: { id: 'job_x' } } },
      { topic: 'record.updated', collection: 'issues', recordId: 'rec_a', payload: { record: { id: 'rec_a', data: { title: '日本語' } }, previous: { data: { title: tricky } } } },
      { topic: 'record.deleted', collection: 'issues', recordId: 'rec_a', payload: { record: null, previous: { id: 'rec_a' } } },
    ];
    await write(inputs);
    const text = (await feedPage(t.ctx, request(undefined))).toString('utf8');
    const page = JSON.parse(text) as { items: Array<{ topic: string; collection: string; payload: Record<string, unknown> }>; nextCursor: string };
    expect(text).toBe(await expectedPage(page.nextCursor));
    expect(page.items.map((e) => e.topic)).toEqual(['record.created', 'record.updated', 'record.deleted']);
    expect(page.items.every((e) => e.collection === 'issues')).toBe(true);
    expect((page.items[0]!.payload.record as { data: { title: string } }).data.title).toBe(tricky);
    expect(page.items[2]!.payload.record).toBeNull();
    // The admin feed shows the operational event, in its place.
    const admin = JSON.parse((await feedPage(t.ctx, request(undefined, { filter: { collections: null, topics: null, operational: true } }))).toString('utf8'));
    expect(admin.items.map((e: { topic: string }) => e.topic)).toEqual(['record.created', 'delivery.dead', 'record.updated', 'record.deleted']);
  });

  it('gives the same bytes for events stored with their JSON prefix (migration 012) and for older ones built from their columns', async () => {
    t = await createTestContext(dialect);
    const odd = 'rec_"quoted" é✓ back\\slash \u0001';
    const inputs: EventInput[] = Array.from({ length: 6 }, (_, i): EventInput => ({
      topic: i % 2 ? 'record.updated' : 'record.created',
      collection: 'issues',
      recordId: i === 3 ? odd : `rec_${i}`,
      payload: { record: { id: `rec_${i}`, data: { title: `✓ ${i}` } } },
    }));
    await write(inputs);
    const db = t.ctx.database.db;
    const prefixed = await sql<{ n: number }>`select count(*) as n from events where json_prefix is not null`.execute(db);
    expect(Number(prefixed.rows[0]!.n)).toBe(6);
    const withPrefixes = (await feedPage(t.ctx, request(undefined))).toString('utf8');
    const nextCursor = (JSON.parse(withPrefixes) as { nextCursor: string }).nextCursor;
    expect(withPrefixes).toBe(await expectedPage(nextCursor));
    // Events from before the prefix existed: every other one loses it, and the page is the same, byte for byte.
    await sql`update events set json_prefix = null where record_id in ('rec_0', ${odd}, 'rec_4')`.execute(db);
    expect((await feedPage(t.ctx, request(undefined))).toString('utf8')).toBe(withPrefixes);
  });

  it('stays within maxBytes counting UTF-8 bytes exactly, with at least one event, and pages on to every event', async () => {
    t = await createTestContext(dialect);
    // Three-byte characters: a page counted in UTF-16 units would be ~3× over the limit.
    const events = Array.from({ length: 12 }, (_, i): EventInput => ({ topic: 'record.created', collection: 'issues', recordId: `rec_${i}`, payload: { record: { data: { title: '✓'.repeat(200 + i) } } } }));
    events.push({ topic: 'record.created', collection: 'issues', recordId: 'rec_big', payload: { record: { data: { title: '✓'.repeat(3000) } } } });
    await write(events);
    const maxBytes = 2048;
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const bytes = await feedPage(t.ctx, request(cursor, { maxBytes }));
      const page = JSON.parse(bytes.toString('utf8')) as { items: Array<{ recordId: string }>; nextCursor: string };
      if (page.items.length === 0) break;
      // An event larger than the limit comes alone; any other page is within it.
      if (page.items.length > 1 || page.items[0]!.recordId !== 'rec_big') expect(bytes.length).toBeLessThanOrEqual(maxBytes);
      expect(page.items.length).toBeGreaterThan(0);
      seen.push(...page.items.map((e) => e.recordId));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(events.map((e) => e.recordId));
  });

  it('serves full pages read ahead, byte for byte as read fresh; never a page that was not full; never past retention', async () => {
    t = await createTestContext(dialect);
    await write(Array.from({ length: 5 }, (_, i): EventInput => ({ topic: 'record.created', collection: 'issues', recordId: `rec_${i}`, payload: { record: { id: `rec_${i}` } } })));
    const pages = new FeedReadAhead(systemClock);
    // The reads ahead, so the test can let them finish before it commits more (a page read waits for its turn).
    const reading: Array<Promise<unknown>> = [];
    const start = pages.start.bind(pages);
    pages.start = (key, read) => start(key, () => {
      const page = read();
      reading.push(page);
      return page;
    });
    const readAhead = { pages, whenSent: (begin: () => void) => begin() };
    const read = async (cursor: string | undefined, ahead: boolean) => (await feedPage(t!.ctx, request(cursor, { limit: 2, ...(ahead ? { readAhead } : {}) }))).toString('utf8');

    const p1 = await read(undefined, true);
    const c1 = JSON.parse(p1).nextCursor as string;
    const fresh2 = await read(c1, false);
    const p2 = await read(c1, true);
    expect(pages.hits).toBe(1);
    expect(p2).toBe(fresh2);
    // The third page (one event) was read ahead but not kept: an event committed since is in it.
    const c2 = JSON.parse(p2).nextCursor as string;
    await Promise.all(reading);
    await write([{ topic: 'record.created', collection: 'issues', recordId: 'rec_late', payload: {} }]);
    const p3 = JSON.parse(await read(c2, true));
    expect(pages.hits).toBe(1);
    expect(p3.items.map((e: { recordId: string }) => e.recordId)).toEqual(['rec_4', 'rec_late']);

    // A page read ahead from a cursor that retention has since passed is refused like any other.
    await read(undefined, true);
    await putMetaAtLeast(t.ctx.database.db, PRUNED_THROUGH_KEY, prunedThroughText(decodeFeedCursor(c2) as FeedPosition));
    await expect(read(c1, true)).rejects.toMatchObject({ code: 'cursor_expired' });
    expect(pages.hits).toBe(1);
  });
});
