import { CompiledQuery, sql, type Kysely } from 'kysely';
import { insertRows, sqlOnce, type InsertPart } from '../db/compiled.js';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { RecordsTable, Tables } from '../db/tables.js';

export interface StoredRecord {
  id: string;
  collection: string;
  version: number;
  data: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export const toRecord = (r: RecordsTable): StoredRecord => ({
  id: r.id,
  collection: r.collection,
  version: r.version,
  // Without a prototype, `data.constructor` or `data.toString` of a record that lacks those fields is undefined, as
  // it must be for code comparing a record's fields (changes.ts), not an inherited function.
  data: Object.assign(Object.create(null) as Record<string, unknown>, JSON.parse(r.data) as Record<string, unknown>),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * A page's rows as one statement reads them: up to `limit` records after `afterId` in id order, each with the byte
 * length of its data (`octet_length`, read from the row header on both databases without loading the value) and its
 * data itself only when that is at most `inlineMaxBytes`, else null: a page of ordinary records is one statement, and
 * what it holds in memory stays within limit × inlineMaxBytes whatever the records' sizes.
 */
export type SizedRecordRow = readonly [id: string, version: number, createdAt: number, updatedAt: number, bytes: number | string, data: string | null];

export async function listRecordPage(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  collection: string,
  afterId: string | null,
  limit: number,
  inlineMaxBytes: number,
): Promise<SizedRecordRow[]> {
  // Built once (sqlOnce), its rows arrays (caps.arrayRows). Parameters: inlineMaxBytes, collection, afterId ('' before
  // the first id), limit. The limit is an expression (`? + 0`), not a bare parameter: SQLite plans a statement with a
  // bare LIMIT parameter again whenever it is bound, on every page (QueryDialect.limit in db/dialects/sqlite.ts); this
  // page's plan is the primary key's range whatever the limit.
  const text = sqlOnce(db, 'records-page', (d) =>
    d
      .selectFrom('records')
      .select(['id', 'version', 'created_at', 'updated_at', sql<number>`octet_length(data)`.as('bytes'), sql<string | null>`case when octet_length(data) <= ${0} then data end`.as('data')])
      .where('collection', '=', '')
      .where('id', '>', '')
      .orderBy('id')
      .limit(sql<number>`${0} + 0`),
  );
  return caps.arrayRows<SizedRecordRow>(db, CompiledQuery.raw(text, [Math.max(0, Math.floor(inlineMaxBytes)), collection, afterId ?? '', limit]));
}

/** A record's row as the page reads it: RecordsTable's columns in its order, data still JSON text. */
export type RecordRow = readonly [id: string, collection: string, version: number, data: string, createdAt: number, updatedAt: number];

/** The rows from `firstId` to `lastId`, in id order, data still JSON text: the list splices it in without parsing. */
export async function listRecordRange(db: Kysely<Tables>, caps: DialectCapabilities, collection: string, firstId: string, lastId: string): Promise<RecordRow[]> {
  // Built once (sqlOnce). Parameters: collection, firstId, lastId.
  const text = sqlOnce(db, 'records-page-range', (d) =>
    d
      .selectFrom('records')
      .select(['id', 'collection', 'version', 'data', 'created_at', 'updated_at'])
      .where('collection', '=', '')
      .where('id', '>=', '')
      .where('id', '<=', '')
      .orderBy('id'),
  );
  return caps.arrayRows<RecordRow>(db, CompiledQuery.raw(text, [collection, firstId, lastId]));
}

/** The stored sizes of these records of a collection, in bytes, read from the rows' headers (not their data). */
export async function recordSizes(db: Kysely<Tables>, collection: string, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('records')
    .select(['id', sql<number>`octet_length(data)`.as('bytes')])
    .where('collection', '=', collection)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, Number(r.bytes)]));
}

export async function findRecord(db: Kysely<Tables>, collection: string, id: string): Promise<StoredRecord | null> {
  const row = await db.selectFrom('records').selectAll().where('collection', '=', collection).where('id', '=', id).executeTakeFirst();
  return row ? toRecord(row) : null;
}

const RECORDS_INSERT = { name: 'records-insert', table: 'records', columns: ['id', 'collection', 'version', 'data', 'created_at', 'updated_at'] } as const;
const recordRows = (records: readonly StoredRecord[]) => records.map((r) => [r.id, r.collection, r.version, JSON.stringify(r.data), r.createdAt, r.updatedAt]);

/** New records, one insert statement for all of them (up to ROWS_PER_INSERT): seeding outside a write (tests). */
export async function insertRecords(db: Kysely<Tables>, records: readonly StoredRecord[]): Promise<void> {
  await insertRows(db, RECORDS_INSERT, recordRows(records));
}

/** The insert of new records, for the write to run with its events and jobs (insertTogether). */
export function recordsInsert(records: readonly StoredRecord[]): InsertPart {
  return { spec: RECORDS_INSERT, rows: recordRows(records) };
}

/** Optimistic: applies only if the row is still at `expectedVersion`. */
export async function updateRecord(db: Kysely<Tables>, r: StoredRecord, expectedVersion: number): Promise<boolean> {
  const res = await db
    .updateTable('records')
    .set({ version: r.version, data: JSON.stringify(r.data), updated_at: r.updatedAt })
    .where('collection', '=', r.collection)
    .where('id', '=', r.id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function deleteRecord(db: Kysely<Tables>, collection: string, id: string, expectedVersion: number): Promise<boolean> {
  const res = await db
    .deleteFrom('records')
    .where('collection', '=', collection)
    .where('id', '=', id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export async function collectionHasRecords(db: Kysely<Tables>, collection: string): Promise<boolean> {
  const row = await db.selectFrom('records').select(sql<number>`1`.as('one')).where('collection', '=', collection).limit(1).executeTakeFirst();
  return row !== undefined;
}
