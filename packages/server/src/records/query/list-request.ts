import type { Database } from '../../db/dialects/types.js';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { decodeCursor } from '../../lib/cursor.js';
import { idPattern } from '../../lib/ids.js';
import { LruCache } from '../../lib/lru.js';
import type { Collection } from '../collections-store.js';
import { recordPageJson } from '../record-page.js';
import { filterOrThrow, type Filter } from './check.js';
import { queryPageJson } from './query-page.js';
import { decodeKeyset, sortValuesDigest, type Keyset } from './keyset-cursor.js';
import { sortValuesOf, type KeysetPosition } from './records-query-store.js';
import { parseProjection, parseSort, queryFingerprint, type SortKey } from './sort.js';

/** A records list request's query parameters (SPEC §4 and §8). */
export interface ListParams {
  limit?: number;
  cursor?: string;
  filter?: string;
  sort?: string;
  fields?: string;
  count?: boolean;
}

const REC_ID = idPattern('rec');

/**
 * Checked filters and sorts by collection version and text: a client repeating a query (a dashboard, a poller) skips
 * parsing and checking. Faults are not kept; they throw on every request.
 */
const checked = new LruCache<string, { filter: Filter | null; sort: SortKey[] }>(256);

/** A cursor issued for a filter or sort, brought to the list without them: another query's cursor (SPEC §8). */
function refuseKeysetCursor(raw: string): void {
  let q: unknown;
  try {
    q = (JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { q?: unknown }).q;
  } catch {
    return; // decodeCursor judges it
  }
  if (q !== undefined) decodeCursor('!', REC_ID);
}

/**
 * One page of a collection's records for the public list and its admin twin. Without filter, sort, fields or count
 * it is the plain page in id order (its cursors are the same either way, as id order has no other sort values).
 */
export async function listRecordsJson(ctx: Context, collection: Collection, p: ListParams): Promise<Buffer> {
  const { database } = ctx;
  // 128 bits of a MAC under a key of its own (derived from SVC_SECRET_KEY): cursors stay short.
  const mac = (text: string) => ctx.box.derive('records cursor', text).slice(0, 22);
  try {
    return await listPage(database, collection, p, ctx.config.listMaxBytes, mac);
  } catch (err) {
    if (database.caps.isQueryTimeout(err)) {
      throw new AppError('query_timeout', 'The query ran longer than the query timeout and was cancelled; narrow the filter or use indexed fields.');
    }
    throw err;
  }
}

/**
 * Where a keyset cursor's page starts. A bounded cursor that cut long texts to prefixes (keyset-cursor.ts) is made
 * exact again from its row, read by id, when that row's sort values are still those the cursor was made from (their
 * digest); if the row was changed or deleted since, the page starts at the first cut key's prefix (loose), which may
 * repeat rows whose value starts with that prefix but skips none.
 */
async function startOf(database: Database, collection: string, sort: readonly SortKey[], keyset: Keyset): Promise<KeysetPosition> {
  if (!keyset.cut) return { id: keyset.id, values: keyset.values, loose: null };
  const current = await sortValuesOf(database.queries, database.caps.query, collection, sort, keyset.id);
  if (current !== null && sortValuesDigest(current) === keyset.cut.digest) return { id: keyset.id, values: current, loose: null };
  return { id: keyset.id, values: keyset.values, loose: keyset.cut.keys[0]! };
}

async function listPage(database: Database, collection: Collection, p: ListParams, maxBytes: number, mac: (text: string) => string): Promise<Buffer> {
  // Filters, sorts and counts can read a whole collection: they run where a query can be stopped (database.queries:
  // SQLite's reader threads, PostgreSQL's pool with statement_timeout). The plain page reads at most limit + 1 rows
  // along the primary key and only the bytes that fit (record-page.ts): bounded, it stays on the main connection,
  // which is faster for it than a thread hop (W1's hot path).
  const db = database.queries;
  const plain = database.db;
  const q = database.caps.query;
  const limit = p.limit ?? 50;
  if (!p.filter && !p.sort && p.fields === undefined && p.count !== true) {
    if (p.cursor) refuseKeysetCursor(p.cursor);
    return recordPageJson(plain, database.caps, collection.name, decodeCursor(p.cursor, REC_ID), limit, maxBytes);
  }
  const filterText = p.filter ?? '';
  const sortText = p.sort ?? '';
  const cacheKey = `${collection.name}\u0000${collection.createdAt}\u0000${collection.updatedAt}\u0000${filterText}\u0000${sortText}`;
  const { filter, sort } = checked.getOrSet(cacheKey, () => ({
    // Blank (the grammar's whitespace only) is no filter, like an empty one.
    filter: /^[ \t\n\r]*$/.test(filterText) ? null : filterOrThrow(filterText, collection.fields),
    sort: parseSort(p.sort, collection.fields),
  }));
  const projection = parseProjection(p.fields, collection.fields);
  const keyed = filter !== null || sort.length > 0;
  const keyset = keyed ? { fingerprint: queryFingerprint(filterText, sortText), mac } : null;
  if (!keyed && p.cursor) refuseKeysetCursor(p.cursor);
  if (!keyed && projection === null && p.count !== true) return recordPageJson(plain, database.caps, collection.name, decodeCursor(p.cursor, REC_ID), limit, maxBytes);
  let after: KeysetPosition | null = null;
  if (p.cursor !== undefined && p.cursor !== '') {
    after = keyset === null ? { id: decodeCursor(p.cursor, REC_ID)!, values: [], loose: null } : await startOf(database, collection.name, sort, decodeKeyset(p.cursor, sort, keyset, REC_ID));
  }
  return queryPageJson(db, q, { collection: collection.name, filter, sort, after, cacheKey }, { limit, maxBytes, projection, count: p.count === true, keyset });
}
