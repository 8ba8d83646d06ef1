import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import { iso } from '../lib/clock.js';
import { LIST_FRAME_MIN_BYTES, encodeCursor, pageWithin, splicedItemBytes, splicedListBytes } from '../lib/cursor.js';
import { listRecordPage, listRecordRange } from './records-store.js';

/** A record's JSON around its stored data text, which is spliced in as it is (it is already JSON). */
const recordHead = (id: string, collection: string, version: number, createdAt: number, updatedAt: number): string =>
  `{"id":"${id}","collection":"${collection}","version":${version},"createdAt":"${iso(createdAt)}","updatedAt":"${iso(updatedAt)}","data":`;

/**
 * One page of a collection's records as JSON (its bytes, lib/cursor.ts splicedListBytes), within `limit` items and `maxBytes` bytes (SVC_LIST_MAX_BYTES).
 * One statement reads the page's rows with their data sizes, and the data of every row of at most maxBytes / (limit +
 * 1) bytes: a page of ordinary records is that statement alone. A page with a larger record reads the rows that can
 * fit again, data and all, by their id range: a page of 500 records of 1 MiB is never in memory at once, only
 * `maxBytes` (or the one record a page always holds) and a few bytes of slack.
 */
export async function recordPageJson(db: Kysely<Tables>, caps: DialectCapabilities, collection: string, afterId: string | null, limit: number, maxBytes: number): Promise<Buffer> {
  const sized = await listRecordPage(db, caps, collection, afterId, limit + 1, maxBytes / (limit + 1));
  if (sized.length === 0) return splicedListBytes([], null);
  // The plan must never leave out a row that fits, so it counts less than any row takes (the head with a one-digit
  // version, no comma) and the smallest frame; the exact fit is decided below from the rows as read.
  const headMin = recordHead('rec_00000000000000000000000000', collection, 1, 0, 0).length + 1;
  let planned = 1;
  for (let bytes = LIST_FRAME_MIN_BYTES + headMin + Number(sized[0]![4]); planned < Math.min(limit, sized.length); planned++) {
    bytes += headMin + Number(sized[planned]![4]);
    if (bytes > maxBytes) break;
  }
  const more = sized.length > planned;
  let rows: ReadonlyArray<readonly [id: string, version: number, createdAt: number, updatedAt: number, data: string]>;
  const plannedRows = sized.slice(0, planned);
  if (plannedRows.every((r) => r[5] !== null)) rows = plannedRows.map(([id, version, createdAt, updatedAt, , data]) => [id, version, createdAt, updatedAt, data!] as const);
  else {
    rows = (await listRecordRange(db, caps, collection, sized[0]![0], sized[planned - 1]![0])).map(([id, , version, data, createdAt, updatedAt]) => [id, version, createdAt, updatedAt, data] as const);
    // Deleted since they were sized: the page continues after the range it planned.
    if (rows.length === 0) return splicedListBytes([], more ? encodeCursor(sized[planned - 1]![0]) : null);
  }
  const items = rows.map(([id, version, createdAt, updatedAt, data]) => ({ id, head: recordHead(id, collection, version, createdAt, updatedAt), data, dataBytes: Buffer.byteLength(data) }));
  const page = pageWithin(items, limit, maxBytes, (r) => r.id, splicedItemBytes, more);
  return splicedListBytes(page.items, page.nextCursor);
}
