import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import { OPERATIONAL_COLLECTION } from '../lib/ids.js';

/** A feed position: events are ordered by (tx, position), see docs/event-feed.md. */
export interface FeedPosition {
  tx: number;
  position: number;
}

/** Feed order: negative when `a` comes first, positive when it comes after `b`, 0 for the same position. */
export const compareFeed = (a: FeedPosition, b: FeedPosition): number => a.tx - b.tx || a.position - b.position;

/** Whether `a` comes after `b` in the feed's order. */
export const beyond = (a: FeedPosition, b: FeedPosition): boolean => compareFeed(a, b) > 0;

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

/**
 * What every feed statement shares: the horizon and the filters. SQLite's horizon is a constant, written into each
 * part so that the feed index serves the order (joined from a CTE, SQLite sorted every page in a temporary B-tree:
 * 2-3× the read). PostgreSQL's reads the snapshot: computed once, in a CTE, so that a page and the head are cut at
 * the same horizon.
 */
function feedStatementParts(caps: DialectCapabilities, filter: FeedFilter) {
  const { collections, topics } = filter;
  const byCollection = collections === null ? sql`` : sql`and collection in (${sql.join(collections)})`;
  const byTopic = topics === null ? sql`` : sql`and topic in (${sql.join(topics)})`;
  const byKind = filter.operational ? sql`` : sql`and collection <> ${OPERATIONAL_COLLECTION}`;
  const [withHorizon, fromHorizon, h] = caps.feedHorizonOnce
    ? [sql`with horizon as (select ${caps.feedHorizon()} as h)`, sql`, horizon`, sql`horizon.h`]
    : [sql``, sql``, caps.feedHorizon()];
  return { withHorizon, fromHorizon, h, matching: sql`${byCollection} ${byTopic} ${byKind}` };
}

/**
 * One page of the feed after `after` (null: from the oldest), and the head: the last position readable now. One
 * statement, so the page and the head come from one snapshot, and only under the horizon (below it nothing can
 * commit any more; see DialectCapabilities.feedHorizon): a position handed out is never passed by a later commit.
 */
export async function readFeed(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { after: FeedPosition | null; filter: FeedFilter; limit: number },
): Promise<{ rows: FeedRow[]; head: FeedPosition | null }> {
  const after = opts.after ?? { tx: -1, position: -1 };
  const { withHorizon, fromHorizon, h, matching } = feedStatementParts(caps, opts.filter);
  const { rows } = await sql<FeedRow & { head: boolean }>`
    ${withHorizon}
    select * from (
      select ${caps.eventJson()} as json, topic, collection, tx, position, false as head
        from events${fromHorizon}
       where position is not null and tx < ${h} and (tx, position) > (${after.tx}, ${after.position}) ${matching}
       order by tx, position
       limit ${opts.limit}) page
    union all
    select * from (
      select null as json, topic, collection, tx, position, true as head
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
  const last = rows.find((r) => r.head);
  return { rows: page, head: last ? { tx: Number(last.tx), position: Number(last.position) } : null };
}

/** The position of the newest event in the feed, whatever the horizon; retention never removes it. */
export async function newestFeedPosition(db: Kysely<Tables>): Promise<FeedPosition | null> {
  const { rows } = await sql<FeedPosition>`select tx, position from events where position is not null order by tx desc, position desc limit 1`.execute(db);
  const r = rows[0];
  return r ? { tx: Number(r.tx), position: Number(r.position) } : null;
}

/** One page of the feed as the database joined it: its events' JSON, comma-separated, and where it ends. */
export interface JoinedPage {
  /** The kept events' JSON joined with commas (UTF-8 bytes or text, as the dialect returns it); null when none. */
  items: Buffer | string | null;
  /** Events kept (within the byte budget), and events read (up to the limit) before the budget cut. */
  kept: number;
  read: number;
  /** The last kept event's position. */
  last: FeedPosition | null;
  head: FeedPosition | null;
}

/**
 * readFeed for a feed page: the database builds each event's JSON (DialectCapabilities.eventJson) and, on SQLite,
 * joins the page's into one value with their sizes and positions beside it (DialectCapabilities.joinPage). A page of
 * 1,000 events of 1.4 KB reaches JavaScript as one Buffer and two short strings: walking 100,000 events, 2.7 ms a
 * page, where reading the rows and making the JSON in JavaScript took 6.4 ms (W9). PostgreSQL sends the JSON
 * row by row (one 1.4 MB value is slower through the driver than 1,000 small ones). Same horizon, same snapshot as
 * readFeed.
 *
 * The events are kept in order while their JSON and the commas between fit `budget` bytes (the first one always).
 * An aggregate takes its rows in the order the ordered subquery yields them (SQLite does, without promising it; an
 * ORDER BY inside the aggregate would sort 1.4 MB again): the positions, joined in the same pass, say the order the
 * items came in, and a page that did not come in feed order is put in order here by the sizes.
 */
export async function readFeedPage(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { after: FeedPosition; filter: FeedFilter; limit: number; budget: number },
): Promise<JoinedPage> {
  const { after } = opts;
  const { withHorizon, fromHorizon, h, matching } = feedStatementParts(caps, opts.filter);
  const page = sql`
    select ${caps.eventJson()} as json, tx, position
      from events${fromHorizon}
     where position is not null and tx < ${h} and (tx, position) > (${after.tx}, ${after.position}) ${matching}
     order by tx, position
     limit ${opts.limit}`;
  const headRow = sql`
    select tx, position
      from events${fromHorizon}
     where position is not null and tx < ${h}
     order by tx desc, position desc
     limit 1`;
  const headOf = (r: { tx: number | null; position: number | null } | undefined) => (r ? { tx: Number(r.tx), position: Number(r.position) } : null);
  const join = caps.joinPage;
  if (join) {
    const { rows } = await sql<{ items: Buffer | string | null; sizes: string | null; positions: string | null; tx: number | null; position: number | null }>`
      ${withHorizon}
      select ${join.json(sql`json`)} as items, ${join.text(sql`octet_length(json)`)} as sizes, ${join.text(sql`tx || '.' || position`)} as positions,
             cast(null as bigint) as tx, cast(null as bigint) as position
        from (${page}) page
      union all
      select * from (select cast(null as text), cast(null as text), cast(null as text), tx, position from (${headRow}) h) head`.execute(db);
    const joined = rows.find((r) => r.tx === null)!;
    const head = headOf(rows.find((r) => r.tx !== null));
    if (joined.items === null || joined.sizes === null || joined.positions === null) return { items: null, kept: 0, read: 0, last: null, head };
    return { ...keepInBudget(joined.items, joined.sizes.split(',').map(Number), joined.positions.split(',').map(toPosition), opts.budget), head };
  }
  const statement = sql<{ json: string | null; tx: number; position: number }>`
    ${withHorizon}
    select * from (${page}) page
    union all
    select * from (select cast(null as text), tx, position from (${headRow}) h) head`.compile(db);
  caps.keepPlan(statement.sql);
  const { rows } = await db.executeQuery(statement);
  const events = rows.filter((r) => r.json !== null);
  const head = headOf(rows.find((r) => r.json === null));
  if (events.length === 0) return { items: null, kept: 0, read: 0, last: null, head };
  const positions = events.map((r) => ({ tx: Number(r.tx), position: Number(r.position) }));
  // The events' UTF-8 written straight into one buffer, commas between: joining 1,000 strings of 1.4 KB and encoding
  // the result took 2.1 ms a page, a buffer per event and a copy into one 1.0 ms, this 0.4 ms (W9). UTF-8 sizes
  // counted here: the database's own octet_length counts in its encoding, which need not be UTF-8.
  const sizes = events.map((r) => Buffer.byteLength(r.json!));
  const items = Buffer.allocUnsafe(sizes.reduce((sum, size) => sum + size, events.length - 1));
  let at = 0;
  for (const [i, r] of events.entries()) {
    if (i > 0) items[at++] = COMMA[0]!;
    at += items.write(r.json!, at);
  }
  return { ...keepInBudget(items, sizes, positions, opts.budget), head };
}

const toPosition = (text: string): FeedPosition => {
  const dot = text.indexOf('.');
  return { tx: Number(text.slice(0, dot)), position: Number(text.slice(dot + 1)) };
};

/** The items in feed order, as many as fit the budget (at least one); the joined value is used as it is when it can be. */
export function keepInBudget(items: Buffer | string, sizes: readonly number[], positions: readonly FeedPosition[], budget: number): Omit<JoinedPage, 'head'> {
  let order: number[] | null = null;
  for (let i = 1; i < positions.length; i++) {
    if (!beyond(positions[i]!, positions[i - 1]!)) {
      order = positions.map((_, k) => k).sort((x, y) => compareFeed(positions[x]!, positions[y]!));
      break;
    }
  }
  const ordered = order ?? positions.map((_, k) => k);
  let kept = 0;
  let bytes = -1;
  for (const k of ordered) {
    if (kept > 0 && bytes + 1 + sizes[k]! > budget) break;
    bytes += 1 + sizes[k]!;
    kept++;
  }
  const last = positions[ordered[kept - 1]!]!;
  if (order === null && kept === sizes.length) return { items, kept, read: sizes.length, last };
  // Cut or reordered: slices of the UTF-8 bytes, by the sizes.
  const all = typeof items === 'string' ? Buffer.from(items) : items;
  const starts: number[] = [];
  let at = 0;
  for (const size of sizes) {
    starts.push(at);
    at += size + 1;
  }
  const parts: Buffer[] = [];
  for (const k of ordered.slice(0, kept)) {
    if (parts.length > 0) parts.push(COMMA);
    parts.push(all.subarray(starts[k]!, starts[k]! + sizes[k]!));
  }
  return { items: Buffer.concat(parts), kept, read: sizes.length, last };
}

const COMMA = Buffer.from(',');
