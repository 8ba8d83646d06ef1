import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import { noJobOfEvent } from '../db/job-state-arms.js';
import { putMetaAtLeast } from '../db/meta-store.js';
import type { Tables } from '../db/tables.js';
import { newestFeedPosition, type FeedPosition } from './feed-store.js';

/** Where retention records the highest feed position it ever pruned: cursors below it are gone (SPEC §7). */
export const PRUNED_THROUGH_KEY = 'feed_pruned_through';

/** `<tx>.<position>`, each 19 digits, so that text order is feed order (putMetaAtLeast compares text). */
export const prunedThroughText = (p: FeedPosition): string => `${String(p.tx).padStart(19, '0')}.${String(p.position).padStart(19, '0')}`;

/** No job needs the event in `eventColumn`: none unfinished or dead (a delivered one does not need its event). */
const noJobNeeds = (eventColumn: string) => noJobOfEvent(eventColumn, sql<boolean>`j.state <> 'delivered'`);

/**
 * The events retention may remove: occurred before `before`, needed by no unfinished or dead job (a delivered one
 * does not need its event), and, for feed events, under the feed's horizon (no transaction still running could
 * commit an event below them). The newest feed event always stays: SQLite numbers the next position from it.
 * Walks the primary key: event ids sort by creation time, so `idBelow` bounds the walk to old events.
 */
function prunable(db: Kysely<Tables>, caps: DialectCapabilities, opts: { before: number; idBelow: string; head: FeedPosition | null }) {
  const notHead = opts.head === null ? sql`` : sql`and not (e.tx = ${opts.head.tx} and e.position = ${opts.head.position})`;
  return sql<{ id: string }>`
    select e.id from events e
     where e.id < ${opts.idBelow} and e.created_at < ${opts.before}
       and (e.position is null or e.tx < ${caps.feedHorizon()})
       and ${noJobNeeds('e.id')}
       ${notHead}`;
}

/**
 * Removes up to `limit` prunable events, oldest first, in one short transaction, and moves the feed's pruned
 * horizon to the highest position among them (never back).
 */
export async function pruneEvents(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { before: number; idBelow: string; limit: number },
): Promise<{ events: number; prunedThrough: FeedPosition | null }> {
  return db.transaction().execute(async (trx) => {
    const head = await newestFeedPosition(trx);
    const { rows } = await sql<{ id: string }>`${prunable(trx, caps, { ...opts, head })} order by e.id limit ${opts.limit}`.execute(trx);
    if (rows.length === 0) return { events: 0, prunedThrough: null };
    // The guard again: a job written for one of them since (a replay) keeps it.
    const deleted = await sql<FeedPosition & { position: number | null }>`
      delete from events
       where id in (${sql.join(rows.map((r) => r.id))})
         and ${noJobNeeds('events.id')}
      returning tx, position`.execute(trx);
    let top: FeedPosition | null = null;
    for (const r of deleted.rows) {
      if (r.position === null) continue;
      const p = { tx: Number(r.tx), position: Number(r.position) };
      if (top === null || p.tx > top.tx || (p.tx === top.tx && p.position > top.position)) top = p;
    }
    if (top) await putMetaAtLeast(trx, PRUNED_THROUGH_KEY, prunedThroughText(top));
    return { events: deleted.rows.length, prunedThrough: top };
  });
}

/** What pruneEvents would remove now, all batches together (`svc prune --dry-run`). */
export async function countPrunableEvents(db: Kysely<Tables>, caps: DialectCapabilities, opts: { before: number; idBelow: string }): Promise<number> {
  const head = await newestFeedPosition(db);
  const { rows } = await sql<{ n: number }>`select count(*) as n from (${prunable(db, caps, { ...opts, head })}) as p`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
