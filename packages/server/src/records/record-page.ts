import type { Kysely } from 'kysely';
import type { RecordsTable, Tables } from '../db/tables.js';
import { iso } from '../lib/clock.js';
import { LIST_FRAME_MIN_BYTES, encodeCursor, listJson, pageWithin } from '../lib/cursor.js';
import { listRecordRange, listRecordSizes } from './records-store.js';

/** A record's JSON around its stored data text, which is spliced in as it is (it is already JSON). */
const recordHead = (r: RecordsTable): string =>
  `{"id":"${r.id}","collection":"${r.collection}","version":${r.version},"createdAt":"${iso(r.created_at)}","updatedAt":"${iso(r.updated_at)}","data":`;

/**
 * One page of a collection's records as JSON text, within `limit` items and `maxBytes` bytes (SVC_LIST_MAX_BYTES).
 * The database sizes the rows first, then only the rows that can fit are read: a page of 500 records of 1 MiB is
 * never in memory at once, only `maxBytes` (or the one record a page always holds) and a few bytes of slack.
 */
export async function recordPageJson(db: Kysely<Tables>, collection: string, afterId: string | null, limit: number, maxBytes: number): Promise<string> {
  const sizes = await listRecordSizes(db, collection, afterId, limit + 1);
  if (sizes.length === 0) return listJson([], null);
  // The plan must never leave out a row that fits, so it counts less than any row takes (the head with a one-digit
  // version, no comma) and the smallest frame; the exact fit is decided below from the rows as read.
  const headMin = recordHead({ id: 'rec_00000000000000000000000000', collection, version: 1, created_at: 0, updated_at: 0, data: '' }).length + 1;
  let planned = 1;
  for (let bytes = LIST_FRAME_MIN_BYTES + headMin + sizes[0]!.bytes; planned < Math.min(limit, sizes.length); planned++) {
    bytes += headMin + sizes[planned]!.bytes;
    if (bytes > maxBytes) break;
  }
  const more = sizes.length > planned;
  const rows = await listRecordRange(db, collection, sizes[0]!.id, sizes[planned - 1]!.id);
  // Deleted since they were sized: the page continues after the range it planned.
  if (rows.length === 0) return listJson([], more ? encodeCursor(sizes[planned - 1]!.id) : null);
  const items = rows.map((r) => ({ id: r.id, head: recordHead(r), data: r.data }));
  const page = pageWithin(items, limit, maxBytes, (r) => r.id, (r) => r.head.length + Buffer.byteLength(r.data) + 1, more);
  return listJson(page.items.map((r) => `${r.head}${r.data}}`), page.nextCursor);
}
