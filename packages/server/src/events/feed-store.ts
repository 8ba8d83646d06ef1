import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import { OPERATIONAL_COLLECTION } from '../lib/ids.js';

/** A feed position: events are ordered by (tx, position), see docs/event-feed.md. */
export interface FeedPosition {
  tx: number;
  position: number;
}

export interface FeedRow extends FeedPosition {
  id: string;
  topic: string;
  collection: string;
  record_id: string;
  created_at: number;
  payload: string;
}

export interface FeedFilter {
  collections: readonly string[] | null;
  topics: readonly string[] | null;
  /** Svc's operational events (collection `_svc`): the admin feed shows them, the public one never does. */
  operational?: boolean;
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
  const { collections, topics } = opts.filter;
  const byCollection = collections === null ? sql`` : sql`and collection in (${sql.join(collections)})`;
  const byTopic = topics === null ? sql`` : sql`and topic in (${sql.join(topics)})`;
  const byKind = opts.filter.operational ? sql`` : sql`and collection <> ${OPERATIONAL_COLLECTION}`;
  // SQLite's horizon is a constant, written into each half so that the feed index serves the order (joined from a
  // CTE, SQLite sorted every page in a temporary B-tree: 2-3× the read). PostgreSQL's reads the snapshot: computed
  // once, in a CTE, so that the page and the head are cut at the same horizon.
  const [withHorizon, fromHorizon, h] = caps.feedHorizonOnce
    ? [sql`with horizon as (select ${caps.feedHorizon()} as h)`, sql`, horizon`, sql`horizon.h`]
    : [sql``, sql``, caps.feedHorizon()];
  const { rows } = await sql<FeedRow & { head: boolean }>`
    ${withHorizon}
    select * from (
      select id, topic, collection, record_id, created_at, payload, tx, position, false as head
        from events${fromHorizon}
       where position is not null and tx < ${h} and (tx, position) > (${after.tx}, ${after.position})
             ${byCollection} ${byTopic} ${byKind}
       order by tx, position
       limit ${opts.limit}) page
    union all
    select * from (
      select id, topic, collection, record_id, created_at, payload, tx, position, true as head
        from events${fromHorizon}
       where position is not null and tx < ${h}
       order by tx desc, position desc
       limit 1) head`.execute(db);
  // No ORDER BY over the union: SQLite would sort the page again in a temporary B-tree. Each half is read in order
  // and the head is told apart by its flag; the sort makes the page's order certain (on rows in order it only compares).
  const page = rows
    .filter((r) => !r.head)
    .map((r) => ({ ...r, tx: Number(r.tx), position: Number(r.position) }))
    .sort((a, b) => a.tx - b.tx || a.position - b.position);
  const last = rows.find((r) => r.head);
  return { rows: page, head: last ? { tx: Number(last.tx), position: Number(last.position) } : null };
}

/** The position of the newest event in the feed, whatever the horizon; retention never removes it. */
export async function newestFeedPosition(db: Kysely<Tables>): Promise<FeedPosition | null> {
  const { rows } = await sql<FeedPosition>`select tx, position from events where position is not null order by tx desc, position desc limit 1`.execute(db);
  const r = rows[0];
  return r ? { tx: Number(r.tx), position: Number(r.position) } : null;
}
