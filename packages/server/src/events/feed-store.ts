import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import { OPERATIONAL_COLLECTION } from '../lib/ids.js';
import { ownTurn } from '../lib/turns.js';
import { BIG_EVENT_EXTRA_BYTES, feedOrder, inlineBytes, keepWithin, keptWithin, type ReadEvent } from './feed-budget.js';
import { compareFeed, positionKey, type FeedPosition } from './feed-position.js';

export { beyond, compareFeed, type FeedPosition } from './feed-position.js';

/** An event as the feed reads it: its position, what streams filter on, and its JSON (DialectCapabilities.eventJson). */
export interface FeedRow extends FeedPosition {
  topic: string;
  collection: string;
  json: string;
}

export interface FeedFilter {
  collections: readonly string[] | null;
  topics: readonly string[] | null;
  /** Svc's operational events (collection `_svc`): the admin feed shows them, the public one never does. */
  operational?: boolean;
}

/** Where a read without a cursor starts: before every event. */
export const BEFORE_ALL: FeedPosition = { tx: -1, position: -1 };

/**
 * What every feed statement shares: the horizon and the filters. SQLite's horizon is a constant, written into each
 * part so that the feed index serves the order (joined from a CTE, SQLite sorted every page in a temporary B-tree:
 * 2-3× the read). PostgreSQL's reads the snapshot: computed once, in a CTE, so that a page and the head are cut at
 * the same horizon.
 */
function feedStatementParts(caps: DialectCapabilities, filter: FeedFilter, window: { after: FeedPosition; bound: FeedPosition | null } | null = null) {
  const { collections, topics } = filter;
  const byCollection = collections === null ? sql`` : inCollections(collections);
  // SQLite reads a slice through the index its scan bound sought (seekOf): beside a collection, `+topic` keeps it
  // from taking events_topic_feed instead and walking a common topic's events up to a quiet collection's bound.
  const topic = topics !== null && caps.feedScanRows !== null && seekOf(filter)?.column !== 'topic' ? sql`+topic` : sql`topic`;
  const byTopic = topics === null ? sql`` : topics.length === 1 ? sql`and ${topic} = ${topics[0]}` : sql`and ${topic} in (${sql.join(topics)})`;
  // Written as a range of row values: beside the horizon's `tx < h`, SQLite's planner took a plain `<=` for a filter,
  // not for the end of the index range, and walked on to the head (1.4 s over 282,000 events, for 4,096 wanted).
  const bound = window?.bound ?? null;
  const byBound = bound === null ? sql`` : sql`and (tx, position) between (${window!.after.tx}, ${window!.after.position}) and (${bound.tx}, ${bound.position})`;
  const byKind = filter.operational ? sql`` : sql`and collection <> ${OPERATIONAL_COLLECTION}`;
  const [withHorizon, fromHorizon, h] = caps.feedHorizonOnce
    ? [sql`with horizon as (select ${caps.feedHorizon()} as h)`, sql`, horizon`, sql`horizon.h`]
    : [sql``, sql``, caps.feedHorizon()];
  const headRow = sql`
    select tx, position
      from events${fromHorizon}
     where position is not null and tx < ${h}
     order by tx desc, position desc
     limit 1`;
  return { withHorizon, fromHorizon, h, matching: sql`${byCollection} ${byTopic} ${byKind} ${byBound}`, headRow, check: eventCheck(caps) };
}

/**
 * A read's statements over events can be stopped (QueryDialect.eventCheck): run where Database.reads runs them, a page
 * of large events that outlasts the main connection's budget is read again on a reader thread (SPEC §12). Before, a
 * page of 1,000 events of 3 KB was one synchronous statement of ~75 ms, and four clients paging held /healthz 301 ms.
 */
const eventCheck = (caps: DialectCapabilities): RawBuilder<unknown> => (caps.query.eventCheck === null ? sql`` : sql`and ${sql.raw(caps.query.eventCheck)}`);

/** A blob as a Buffer: a reader thread's rows are structured clones, in which a Buffer arrives as a plain Uint8Array. */
const asBuffer = (value: Uint8Array): Buffer => (Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength));

/**
 * A filtered read's slices share a turn of the event loop up to this long (SPEC §12: no read holds the process). A
 * filter that skips most events made one statement walk every event after the cursor, on SQLite on the event loop;
 * so there a read whose filters narrow it walks in slices of DialectCapabilities.feedScanRows positions, and a
 * request that arrives meanwhile waits behind at most one turn's slices, of one read (ownTurn), not of each.
 */
const TURN_MS = 8;

const narrows = (f: FeedFilter): boolean => f.collections !== null || f.topics !== null;

/** One collection as an equality, which every planner takes to `events_collection_feed` (migration 024); more as a list. */
const inCollections = (collections: readonly string[]): RawBuilder<unknown> =>
  collections.length === 1 ? sql`and collection = ${collections[0]}` : sql`and collection in (${sql.join(collections)})`;

/**
 * A page's rows: events after `after` that match, in feed order, at most `limit`, with `columns` of each. SQLite (whose
 * reads go in slices, DialectCapabilities.feedScanRows; PostgreSQL's planner weighs a whole read, and its plans are
 * left as they were) reads several collections through `events_collection_feed` (migration 024), one seek each, and
 * sorts what they hold in the slice: it takes that index for any `collection in (…)`, past COLLECTION_SEEKS too.
 * Several topics of a read that names no collection go the same way through `events_topic_feed` (025).
 * Sorting the rows themselves built and sorted the JSON of every event in the slice before the limit kept any: 43 ms
 * for a page of 1,000 events of 1.3 KB of 16 collections, where the feed index walked the same slice in order in
 * 14 ms. So there the sort takes only the positions, from that index alone, and the events are read by position after
 * the limit: 13 ms. The rows come in the order of the positions (the join's outer side is the sorted positions, which
 * a CROSS JOIN keeps on SQLite), which the readers check rather than sort again (feedOrder, compareFeed).
 */
function pageRows(caps: DialectCapabilities, filter: FeedFilter, parts: ReturnType<typeof feedStatementParts>, after: FeedPosition, limit: number, columns: RawBuilder<unknown>) {
  const { fromHorizon, h, matching, check } = parts;
  const range = sql`position is not null and tx < ${h} and (tx, position) > (${after.tx}, ${after.position}) ${matching}`;
  const keys = filter.collections?.length ?? (seekOf(filter)?.keys.length ?? 0);
  if (caps.feedScanRows === null || keys < 2) {
    return sql`select ${columns} from events${fromHorizon} where ${range} ${check} order by tx, position limit ${caps.query.limit(limit)}`;
  }
  return sql`
    select ${columns}
      from (select tx as page_tx, position as page_position from events${fromHorizon} where ${range} order by tx, position limit ${caps.query.limit(limit)}) keys
     cross join events
     where events.position is not null and events.tx = keys.page_tx and events.position = keys.page_position ${check}`;
}

/**
 * A read filtered to at most this many collections finds its scan bound in each collection's own feed (migration
 * 024: one index seek each); a read of more (a token that may read many collections) walks the whole feed's
 * positions, as every filtered read did before. Past a few collections the filter no longer narrows much, and each
 * seek walks up to a slice of its collection's events.
 */
const COLLECTION_SEEKS = 16;

/**
 * The index a filtered read's scan bound seeks, one seek per key: `events_collection_feed` (024) for up to
 * COLLECTION_SEEKS collections; for a read that names no collection, `events_topic_feed` (025) for its topics (at most
 * ten, SPEC's query; each once). Null: the bound is found by walking the feed's positions. A read of collections and
 * topics seeks its collections: the slice then holds at most a slice's worth of their events, whatever their topics.
 */
function seekOf(filter: FeedFilter): { column: 'collection' | 'topic'; keys: readonly string[] } | null {
  const { collections, topics } = filter;
  if (collections !== null) return collections.length <= COLLECTION_SEEKS ? { column: 'collection', keys: collections } : null;
  if (topics === null) return null;
  const keys = [...new Set(topics)];
  return keys.length <= COLLECTION_SEEKS ? { column: 'topic', keys } : null;
}

/**
 * Where a filtered read's slice ends: the `rows`-th position after `after` below the horizon, or null when fewer
 * follow it (the read may go to the head). For a filter of k keys it seeks (seekOf: collections, or topics when it
 * names no collection), the earliest position at which one of them has had rows / k events, so a slice holds at most
 * `rows` of their events together, however many other events lie between (a quiet collection's or topic's read
 * reaches the head in one slice). Not `rows` of each: the page's statement sorts what the slice holds when it reads
 * several keys (no index gives their events in feed order), and 16 busy collections would have it build and sort
 * 16,384 events' JSON for a page of 1,000.
 */
async function scanBound(db: Kysely<Tables>, caps: DialectCapabilities, after: FeedPosition, rows: number, filter: FeedFilter): Promise<FeedPosition | null> {
  const { withHorizon, fromHorizon, h } = feedStatementParts(caps, { collections: null, topics: null, operational: true });
  const nth = (byCollection: RawBuilder<unknown>, n: number) => sql`
    select tx, position
      from events${fromHorizon}
     where position is not null and tx < ${h} and (tx, position) > (${after.tx}, ${after.position}) ${byCollection}
     order by tx, position
     limit 1 offset ${n - 1}`;
  const seek = seekOf(filter);
  const each = seek === null ? rows : Math.max(1, Math.floor(rows / seek.keys.length));
  const byKey = (key: string) => (seek!.column === 'collection' ? inCollections([key]) : sql`and topic = ${key}`);
  const statement =
    seek === null
      ? sql<FeedPosition>`${withHorizon} ${nth(sql``, rows)}`
      : sql<FeedPosition>`${withHorizon}
          select tx, position from (${sql.join(seek.keys.map((k) => sql`select * from (${nth(byKey(k), each)}) n`), sql` union all `)}) ends
           order by tx, position
           limit 1`;
  const { rows: at } = await statement.execute(db);
  return headOf(at[0]);
}

/**
 * Runs `read` over bounded slices of the feed after `after` (scanBound), up to TURN_MS of them a turn, until a slice
 * finds an event or the last one reaches the head; `read` gets null for the bound where none is needed. Returns the
 * read and whether it stopped at a bound (events after its last one are still unexamined: more may follow at once).
 */
async function readBounded<T>(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  after: FeedPosition,
  filter: FeedFilter,
  limit: number,
  read: (after: FeedPosition, bound: FeedPosition | null) => Promise<T>,
  found: (result: T) => boolean,
): Promise<{ result: T; bounded: boolean }> {
  const rows = limit > 0 && narrows(filter) ? caps.feedScanRows : null;
  let turnStarted = -Infinity;
  for (let from = after; ; ) {
    // The first slice too: ten requests arriving together would otherwise each run theirs in one turn.
    if (rows !== null && performance.now() - turnStarted >= TURN_MS) {
      await ownTurn();
      turnStarted = performance.now();
    }
    const bound = rows !== null ? await scanBound(db, caps, from, rows, filter) : null;
    const result = await read(from, bound);
    if (bound === null || found(result)) return { result, bounded: bound !== null };
    from = bound;
  }
}

/**
 * An event's JSON in the feed: DialectCapabilities.eventJson, and for an event whose write was traced (migration 019)
 * a last member `"traceparent"` after the payload (SPEC §15). Absent, not null, when there is none: events written
 * before 019 or with tracing off (a write tracing did not sample has one, its flags `00`). Only `traceparent` is
 * served, not `tracestate` (vendor data of the writer's trace: sent to receivers, not published in the feed). A
 * traced event always has its prefix (012 came first), so its JSON is built here from the prefix; the value is svc's
 * own (`00-<32 hex>-<16 hex>-<2 hex>`, tracing/otel.ts), safe in a JSON string without quoting. 72 bytes more per
 * traced event, within BIG_EVENT_EXTRA_BYTES (512) for a big one.
 */
export const feedEventJson = (caps: DialectCapabilities): RawBuilder<string> =>
  sql<string>`case when traceparent is not null and json_prefix is not null
    then json_prefix || coalesce(payload, 'null') || ',"traceparent":"' || traceparent || '"}'
    else ${caps.eventJson()} end`;

/** One event as the feed serves it (its traceparent too), or null: unknown, or not in the feed (a webhook.test job's). */
export async function findFeedEventJson(db: Kysely<Tables>, caps: DialectCapabilities, id: string): Promise<string | null> {
  const row = await db.selectFrom('events').select(feedEventJson(caps).as('json')).where('id', '=', id).where('position', 'is not', null).executeTakeFirst();
  return row?.json ?? null;
}

/**
 * A read's first statement (feed-budget.ts): each event's JSON when its stored payload is at most `inline` bytes, else
 * null and, as `big`, the payload's size; octet_length reads neither SQLite's overflow pages nor PostgreSQL's TOAST,
 * and the JSON of a big event is never built. A null payload (none stored) is small.
 */
const inlineJson = (caps: DialectCapabilities, inline: number): RawBuilder<string | null> =>
  sql`case when octet_length(payload) > ${inline} then null else ${feedEventJson(caps)} end`;
const bigSize = (inline: number): RawBuilder<number | null> => sql`case when octet_length(payload) > ${inline} then octet_length(payload) end`;

const headOf = (r: { tx: unknown; position: unknown } | undefined): FeedPosition | null => (r ? { tx: Number(r.tx), position: Number(r.position) } : null);

/**
 * One read of the feed after `after` (null: from the oldest) for the event streams, and the head: the last position
 * readable now. One statement, so the page and the head come from one snapshot, and only under the horizon (below
 * it nothing can commit any more; see DialectCapabilities.feedHorizon): a position handed out is never passed by a
 * later commit. At most `limit` events, cut at `budget` bytes of JSON (at least one event) as they are read
 * (feed-budget.ts); `full` when the limit or the budget cut it, so that more may follow at once.
 */
export async function readFeed(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { after: FeedPosition | null; filter: FeedFilter; limit: number; budget: number },
): Promise<{ rows: FeedRow[]; head: FeedPosition | null; full: boolean; bytesRead: number }> {
  const { result, bounded } = await readBounded(db, caps, opts.after ?? BEFORE_ALL, opts.filter, opts.limit, (after, bound) => readFeedOnce(db, caps, { ...opts, after, bound }), (r) => r.rows.length > 0);
  // Stopped at a bound with events found: the positions after the last one are still to be examined.
  return bounded ? { ...result, full: true } : result;
}

async function readFeedOnce(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { after: FeedPosition; filter: FeedFilter; limit: number; budget: number; bound: FeedPosition | null },
): Promise<{ rows: FeedRow[]; head: FeedPosition | null; full: boolean; bytesRead: number }> {
  const { after } = opts;
  const inline = inlineBytes(opts.budget, opts.limit);
  const parts = feedStatementParts(caps, opts.filter, { after: opts.after, bound: opts.bound });
  const { withHorizon, fromHorizon, h } = parts;
  const { rows } = await sql<{ json: string | null; big: number | null; topic: string; collection: string; tx: number; position: number; head: boolean }>`
    ${withHorizon}
    select * from (${pageRows(caps, opts.filter, parts, after, opts.limit, sql`${inlineJson(caps, inline)} as json, ${bigSize(inline)} as big, topic, collection, tx, position, false as head`)}) page
    union all
    select * from (
      select cast(null as text) as json, cast(null as bigint) as big, topic, collection, tx, position, true as head
        from events${fromHorizon}
       where position is not null and tx < ${h}
       order by tx desc, position desc
       limit 1) head`.execute(db);
  // No ORDER BY over the union: SQLite would sort the page again in a temporary B-tree. Each half is read in order
  // and the head is told apart by its flag; the sort makes the page's order certain (on rows in order it only compares).
  const page = rows
    .filter((r) => !r.head)
    .map((r) => ({ ...r, tx: Number(r.tx), position: Number(r.position) }))
    .sort(compareFeed);
  const events = page.map((r): ReadEvent<string> => ({ at: r, json: r.json, size: r.json !== null ? Buffer.byteLength(r.json) : Number(r.big) + BIG_EVENT_EXTRA_BYTES }));
  const { kept, bigBytes } = await keepWithin(events, opts.budget, (json) => Buffer.byteLength(json), (at) => readEventJson(db, caps, at, 'text'));
  const inlineRead = events.reduce((sum, e) => sum + (e.json !== null ? e.size : 0), 0);
  return {
    rows: kept.map((e, i) => ({ tx: e.at.tx, position: e.at.position, topic: page[i]!.topic, collection: page[i]!.collection, json: e.json })),
    head: headOf(rows.find((r) => r.head)),
    full: kept.length < page.length || (opts.limit > 0 && page.length === opts.limit),
    bytesRead: inlineRead + bigBytes,
  };
}

/** Whether an event passes a read's filters (what the statements' `matching` says, for rows already read). */
export const matchesFilter = (f: FeedFilter, e: { collection: string; topic: string }): boolean =>
  (f.operational === true || e.collection !== OPERATIONAL_COLLECTION) &&
  (f.collections === null || f.collections.includes(e.collection)) &&
  (f.topics === null || f.topics.includes(e.topic));

/**
 * What committed after `after`, below the horizon, without reading any payload: positions, collections and topics
 * of at most `limit` events (every collection, operational ones too), and the head. One fixed statement text (its
 * plan kept on PostgreSQL): the long-polls' shared look (feed-watch.ts).
 */
export async function readFeedPositions(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { after: FeedPosition; limit: number },
): Promise<{ rows: Array<FeedPosition & { topic: string; collection: string }>; head: FeedPosition | null; full: boolean }> {
  const { after } = opts;
  const { withHorizon, fromHorizon, h } = feedStatementParts(caps, { collections: null, topics: null, operational: true });
  const statement = sql<{ topic: string; collection: string; tx: number; position: number; head: boolean }>`
    ${withHorizon}
    select * from (
      select topic, collection, tx, position, false as head
        from events${fromHorizon}
       where position is not null and tx < ${h} and (tx, position) > (${after.tx}, ${after.position})
       order by tx, position
       limit ${caps.query.limit(opts.limit)}) page
    union all
    select * from (
      select topic, collection, tx, position, true as head
        from events${fromHorizon}
       where position is not null and tx < ${h}
       order by tx desc, position desc
       limit 1) head`.compile(db);
  caps.keepPlan(statement.sql);
  const { rows } = await db.executeQuery(statement);
  const page = rows
    .filter((r) => !r.head)
    .map((r) => ({ topic: r.topic, collection: r.collection, tx: Number(r.tx), position: Number(r.position) }))
    .sort(compareFeed);
  return { rows: page, head: headOf(rows.find((r) => r.head)), full: page.length === opts.limit };
}

/** The position of the newest event in the feed, whatever the horizon; retention never removes it. */
export async function newestFeedPosition(db: Kysely<Tables>): Promise<FeedPosition | null> {
  const { rows } = await sql<FeedPosition>`select tx, position from events where position is not null order by tx desc, position desc limit 1`.execute(db);
  return headOf(rows[0]);
}

/**
 * The JSON of the feed events at these positions (the big events a read kept), by position: UTF-8 bytes where the
 * driver hands them over so (`bytes`, DialectCapabilities.textBytes), else text. The list is padded to a power of two
 * (its last position repeated) so that few statement texts exist for the statement caches.
 */
export async function readEventJson(db: Kysely<Tables>, caps: DialectCapabilities, at: readonly FeedPosition[], as: 'text'): Promise<Map<string, string>>;
export async function readEventJson(db: Kysely<Tables>, caps: DialectCapabilities, at: readonly FeedPosition[], as: 'bytes'): Promise<Map<string, Buffer>>;
export async function readEventJson(db: Kysely<Tables>, caps: DialectCapabilities, at: readonly FeedPosition[], as: 'text' | 'bytes'): Promise<Map<string, string | Buffer>> {
  const padded = [...at];
  while (padded.length & (padded.length - 1)) padded.push(at[at.length - 1]!);
  const json = as === 'bytes' ? caps.textBytes(feedEventJson(caps)) : feedEventJson(caps);
  const values = sql.join(padded.map((p) => sql`(cast(${p.tx} as bigint), cast(${p.position} as bigint))`));
  const { rows } = await sql<{ json: string | Uint8Array; tx: number; position: number }>`
    select ${json} as json, tx, position from events
     where position is not null and (tx, position) in (values ${values}) ${eventCheck(caps)}`.execute(db);
  const found = new Map<string, string | Buffer>();
  for (const r of rows) found.set(positionKey(headOf(r)!), typeof r.json === 'string' ? (as === 'bytes' ? Buffer.from(r.json) : r.json) : asBuffer(r.json));
  return found;
}

/** One page of the feed as the database joined it: its events' JSON, comma-separated, and where it ends. */
export interface JoinedPage {
  /** The kept events' JSON joined with commas (UTF-8 bytes); null when none. */
  items: Buffer | null;
  /** Events kept (within the byte budget), and events read (up to the limit) before the budget cut. */
  kept: number;
  read: number;
  /** The last kept event's position. */
  last: FeedPosition | null;
  head: FeedPosition | null;
  /** Bytes of event JSON the database returned for the page, both statements: the budget applied as it was read. */
  bytesRead: number;
  /** The read stopped at its scan bound (DialectCapabilities.feedScanRows): positions after `last` are still to be examined. */
  more: boolean;
}

/**
 * readFeed for a feed page: the database builds each event's JSON (DialectCapabilities.eventJson) and, on SQLite,
 * joins the page's into one value with their sizes and positions beside it (DialectCapabilities.joinPage). A page of
 * 1,000 events of 1.4 KB reaches JavaScript as one Buffer and two short strings: walking 100,000 events, 2.7 ms a
 * page, where reading the rows and making the JSON in JavaScript took 6.4 ms (W9). PostgreSQL sends the JSON
 * row by row (one 1.4 MB value is slower through the driver than 1,000 small ones). Same horizon, same snapshot as
 * readFeed, and the same budget as it reads (feed-budget.ts): a big event is only a size in the joined value.
 *
 * An aggregate takes its rows in the order the ordered subquery yields them (SQLite does, without promising it; an
 * ORDER BY inside the aggregate would sort 1.4 MB again): the positions, joined in the same pass, say the order the
 * items came in, and a page that did not come in feed order is put in order here by the sizes.
 */
export async function readFeedPage(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { after: FeedPosition; filter: FeedFilter; limit: number; budget: number },
): Promise<JoinedPage> {
  const { result, bounded } = await readBounded(db, caps, opts.after, opts.filter, opts.limit, (after, bound) => readFeedPageOnce(db, caps, { ...opts, after, bound }), (p) => p.kept > 0);
  return { ...result, more: bounded };
}

async function readFeedPageOnce(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { after: FeedPosition; filter: FeedFilter; limit: number; budget: number; bound: FeedPosition | null },
): Promise<Omit<JoinedPage, 'more'>> {
  const { after, budget } = opts;
  const inline = inlineBytes(budget, opts.limit);
  const parts = feedStatementParts(caps, opts.filter, { after: opts.after, bound: opts.bound });
  const { withHorizon, headRow } = parts;
  const page = pageRows(caps, opts.filter, parts, after, opts.limit, sql`${inlineJson(caps, inline)} as json, ${bigSize(inline)} as big, tx, position`);
  const readBig = (at: FeedPosition[]) => readEventJson(db, caps, at, 'bytes');
  const join = caps.joinPage;
  if (join) {
    // A big event's size goes in negative: its JSON is not in `items`.
    const { rows } = await sql<{ items: Uint8Array | string | null; sizes: string | null; positions: string | null; tx: number | null; position: number | null }>`
      ${withHorizon}
      select ${join.json(sql`json`)} as items, ${join.text(sql`coalesce(octet_length(json), -big)`)} as sizes, ${join.text(sql`tx || '.' || position`)} as positions,
             cast(null as bigint) as tx, cast(null as bigint) as position
        from (${page}) page
      union all
      select * from (select cast(null as text), cast(null as text), cast(null as text), tx, position from (${headRow}) h) head`.execute(db);
    const joined = rows.find((r) => r.tx === null)!;
    const head = headOf(rows.find((r) => r.tx !== null));
    if (joined.sizes === null || joined.positions === null) return { items: null, kept: 0, read: 0, last: null, head, bytesRead: 0 };
    const items = joined.items === null ? Buffer.alloc(0) : typeof joined.items === 'string' ? Buffer.from(joined.items) : asBuffer(joined.items);
    const sizes = joined.sizes.split(',').map(Number);
    const positions = joined.positions.split(',').map(toPosition);
    const order = feedOrder(positions);
    // The hot path: every event read whole, in order, within the budget: the joined value is the page as it is.
    if (order === null && sizes.every((s) => s >= 0) && keptWithin(sizes, budget) === sizes.length) {
      return { items, kept: sizes.length, read: sizes.length, last: positions.at(-1)!, head, bytesRead: items.length };
    }
    const events: Array<ReadEvent<Buffer>> = [];
    let at = 0;
    for (const size of sizes) {
      events.push(size >= 0 ? { at: positions[events.length]!, json: items.subarray(at, at + size), size } : { at: positions[events.length]!, json: null, size: BIG_EVENT_EXTRA_BYTES - size });
      if (size >= 0) at += size + 1;
    }
    const ordered = order === null ? events : order.map((k) => events[k]!);
    const { kept, bigBytes } = await keepWithin(ordered, budget, (json) => json.length, readBig);
    return { ...joinEvents(kept), read: sizes.length, head, bytesRead: items.length + bigBytes };
  }
  const statement = sql<{ json: string | null; big: number | null; tx: number; position: number; head: boolean }>`
    ${withHorizon}
    select * from (select *, false as head from (${page}) p) page
    union all
    select * from (select cast(null as text), cast(null as bigint), tx, position, true from (${headRow}) h) head`.compile(db);
  caps.keepPlan(statement.sql);
  const { rows } = await db.executeQuery(statement);
  const read = rows.filter((r) => !r.head);
  const head = headOf(rows.find((r) => r.head));
  if (read.length === 0) return { items: null, kept: 0, read: 0, last: null, head, bytesRead: 0 };
  // UTF-8 sizes counted here: the database's own octet_length counts in its encoding, which need not be UTF-8.
  const sizes = read.map((r) => (r.json !== null ? Buffer.byteLength(r.json) : Number(r.big) + BIG_EVENT_EXTRA_BYTES));
  const inlineRead = read.reduce((sum, r, i) => sum + (r.json !== null ? sizes[i]! : 0), 0);
  const positions = read.map((r) => ({ tx: Number(r.tx), position: Number(r.position) }));
  const kept = keptWithin(sizes, budget);
  if (read.slice(0, kept).every((r) => r.json !== null)) {
    // The hot path: the events' UTF-8 written straight into one buffer, commas between: joining 1,000 strings of
    // 1.4 KB and encoding the result took 2.1 ms a page, a buffer per event and a copy into one 1.0 ms, this 0.4 ms (W9).
    const items = Buffer.allocUnsafe(sizes.slice(0, kept).reduce((sum, size) => sum + size, kept - 1));
    let at = 0;
    for (let i = 0; i < kept; i++) {
      if (i > 0) items[at++] = COMMA[0]!;
      at += items.write(read[i]!.json!, at);
    }
    return { items, kept, read: read.length, last: positions[kept - 1]!, head, bytesRead: inlineRead };
  }
  const events = read.map((r, i): ReadEvent<Buffer> => ({ at: positions[i]!, json: r.json === null ? null : Buffer.from(r.json), size: sizes[i]! }));
  const done = await keepWithin(events, budget, (json) => json.length, readBig);
  return { ...joinEvents(done.kept), read: read.length, head, bytesRead: inlineRead + done.bigBytes };
}

/** The kept events' JSON, commas between, and the last one's position. */
function joinEvents(kept: ReadonlyArray<{ at: FeedPosition; json: Buffer }>): Pick<JoinedPage, 'items' | 'kept' | 'last'> {
  const parts: Buffer[] = [];
  for (const e of kept) {
    if (parts.length > 0) parts.push(COMMA);
    parts.push(e.json);
  }
  return { items: Buffer.concat(parts), kept: kept.length, last: kept.at(-1)!.at };
}

const toPosition = (text: string): FeedPosition => {
  const dot = text.indexOf('.');
  return { tx: Number(text.slice(0, dot)), position: Number(text.slice(dot + 1)) };
};

const COMMA = Buffer.from(',');
