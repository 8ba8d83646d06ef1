import type { Kysely } from 'kysely';
import type { QueryDialect } from '../../db/dialects/types.js';
import type { RecordsTable, Tables } from '../../db/tables.js';
import { iso } from '../../lib/clock.js';
import { CURSOR_MAX_CHARS, LIST_FRAME_MIN_BYTES, encodeCursor, pageWithin, splicedItemBytes, splicedListBytes } from '../../lib/cursor.js';
import { countMatching, listMatching, listRecordsByIds, type MatchingRow, type RecordQuery } from './records-query-store.js';
import { encodeKeyset, type KeysetBinding } from './keyset-cursor.js';

export interface QueryPageOptions {
  limit: number;
  maxBytes: number;
  /** Data fields to keep (`fields=`), or null for all. */
  projection: readonly string[] | null;
  count: boolean;
  /** What the cursors of a filter or sort are bound to, or null for the default order (whose cursors are plain ids). */
  keyset: KeysetBinding | null;
}

/** At least the bytes a keyset cursor of this row takes with its quotes: short rows' cheaply, any row's at most the bound. */
const cursorBound = (m: MatchingRow): number =>
  Math.min(CURSOR_MAX_CHARS, Math.ceil((160 + m.values.reduce<number>((n, v) => n + (typeof v === 'string' ? 6 * v.length : 24), 0)) * 4 / 3)) + 2;

const recordHead = (r: RecordsTable): string =>
  `{"id":"${r.id}","collection":"${r.collection}","version":${r.version},"createdAt":"${iso(r.created_at)}","updatedAt":"${iso(r.updated_at)}","data":`;

function project(data: string, keep: readonly string[]): string {
  const all = JSON.parse(data) as Record<string, unknown>;
  const picked: Record<string, unknown> = {};
  for (const k of keep) if (Object.hasOwn(all, k)) picked[k] = all[k];
  return JSON.stringify(picked);
}

/**
 * A filtered, sorted page as JSON (its bytes, lib/cursor.ts splicedListBytes). One statement finds the matching rows with their sizes and sort values (for
 * the cursor), and the data of those small enough that `limit + 1` of them fit in `maxBytes`; a larger record is read
 * afterwards, and only when the page has room for it (as recordPageJson does for every row).
 */
export async function queryPageJson(db: Kysely<Tables>, q: QueryDialect, query: RecordQuery, o: QueryPageOptions): Promise<Buffer> {
  const sizes = await listMatching(db, q, query, o.limit + 1, o.maxBytes / (o.limit + 1));
  const total = o.count ? await countMatching(db, q, query) : null;
  // The count comes last in the page: its bytes are kept out of the page's budget.
  const maxBytes = total === null ? o.maxBytes : o.maxBytes - `,"totalCount":${total}`.length;
  const cursorOf = (m: MatchingRow) => (o.keyset === null ? encodeCursor(m.id) : encodeKeyset(m, query.sort, o.keyset));
  if (sizes.length === 0) return splicedListBytes([], null, total);
  // Less than any row's head takes (see record-page.ts), so no row that fits is left out of the plan.
  const headMin = recordHead({ id: 'rec_00000000000000000000000000', collection: query.collection, version: 1, created_at: 0, updated_at: 0, data: '' }).length + 1;
  let planned = 1;
  for (let bytes = LIST_FRAME_MIN_BYTES + headMin + sizes[0]!.bytes; planned < Math.min(o.limit, sizes.length); planned++) {
    bytes += headMin + sizes[planned]!.bytes;
    if (bytes > maxBytes) break;
  }
  const more = sizes.length > planned;
  const missing = sizes.slice(0, planned).filter((s) => s.row === null).map((s) => s.id);
  const rowsById = new Map((await listRecordsByIds(db, query.collection, missing)).map((r) => [r.id, r]));
  const items = sizes.slice(0, planned).flatMap((m) => {
    const r = m.row ?? rowsById.get(m.id);
    if (!r) return []; // deleted since it was sized
    const data = o.projection ? project(r.data, o.projection) : r.data;
    return [{ m, head: recordHead(r), data, dataBytes: Buffer.byteLength(data) }];
  });
  if (items.length === 0) return splicedListBytes([], more ? cursorOf(sizes[planned - 1]!) : null, total);
  const byId = new Map(items.map((i) => [i.m.id, i.m]));
  const page = pageWithin(items, o.limit, maxBytes, (i) => i.m.id, splicedItemBytes, more, (id) => cursorOf(byId.get(id)!), (i) => cursorBound(i.m));
  return splicedListBytes(page.items, page.nextCursor, total);
}
