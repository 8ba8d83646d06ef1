import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import { iso } from '../lib/clock.js';
import { LIST_FRAME_MIN_BYTES, encodeCursor, listJson, pageWithin } from '../lib/cursor.js';
import { listRecordRange, listRecordSizes } from './records-store.js';

/** A record's JSON around its stored data text, which is spliced in as it is (it is already JSON). */
const recordHead = (id: string, collection: string, version: number, createdAt: number, updatedAt: number): string =>
  `{"id":"${id}","collection":"${collection}","version":${version},"createdAt":"${iso(createdAt)}","updatedAt":"${iso(updatedAt)}","data":`;

/**
 * One page of a collection's records as JSON text, within `limit` items and `maxBytes` bytes (SVC_LIST_MAX_BYTES).
 * The database sizes the rows first, then only the rows that can fit are read: a page of 500 records of 1 MiB is
 * never in memory at once, only `maxBytes` (or the one record a page always holds) and a few bytes of slack.
 */
export async function recordPageJson(db: Kysely<Tables>, caps: DialectCapabilities, collection: string, afterId: string | null, limit: number, maxBytes: number): Promise<string> {
  const sizes = await listRecordSizes(db, caps, collection, afterId, limit + 1);
  if (sizes.length === 0) return listJson([], null);
  // The plan must never leave out a row that fits, so it counts less than any row takes (the head with a one-digit
  // version, no comma) and the smallest frame; the exact fit is decided below from the rows as read.
  const headMin = recordHead('rec_00000000000000000000000000', collection, 1, 0, 0).length + 1;
  let planned = 1;
  for (let bytes = LIST_FRAME_MIN_BYTES + headMin + sizes[0]!.bytes; planned < Math.min(limit, sizes.length); planned++) {
    bytes += headMin + sizes[planned]!.bytes;
    if (bytes > maxBytes) break;
  }
  const more = sizes.length > planned;
  const rows = await listRecordRange(db, caps, collection, sizes[0]!.id, sizes[planned - 1]!.id);
  // Deleted since they were sized: the page continues after the range it planned.
  if (rows.length === 0) return listJson([], more ? encodeCursor(sizes[planned - 1]!.id) : null);
  const items = rows.map(([id, c, version, data, createdAt, updatedAt]) => ({ id, head: recordHead(id, c, version, createdAt, updatedAt), data }));
  const page = pageWithin(items, limit, maxBytes, (r) => r.id, (r) => r.head.length + Buffer.byteLength(r.data) + 1, more);
  return listJson(page.items.map((r) => `${r.head}${r.data}}`), page.nextCursor);
}
