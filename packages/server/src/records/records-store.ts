import { CompiledQuery, sql, type Kysely } from 'kysely';
import { sqlOnce } from '../db/compiled.js';
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
  data: JSON.parse(r.data) as Record<string, unknown>,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Rows as stored (data still JSON text): the list route splices the text in without parsing it. */
export async function listRecordRows(db: Kysely<Tables>, collection: string, afterId: string | null, limit: number): Promise<RecordsTable[]> {
  // Every page read runs this: built once (sqlOnce). Parameters: collection, [id,] limit.
  const first = (d: Kysely<Tables>) => d.selectFrom('records').selectAll().where('collection', '=', '').orderBy('id').limit(0);
  const query =
    afterId === null
      ? CompiledQuery.raw(sqlOnce(db, 'records-first-page', first), [collection, limit])
      : CompiledQuery.raw(sqlOnce(db, 'records-next-page', (d) => first(d).where('id', '>', '')), [collection, afterId, limit]);
  return (await db.executeQuery<RecordsTable>(query)).rows;
}

export async function findRecord(db: Kysely<Tables>, collection: string, id: string): Promise<StoredRecord | null> {
  const row = await db.selectFrom('records').selectAll().where('collection', '=', collection).where('id', '=', id).executeTakeFirst();
  return row ? toRecord(row) : null;
}

export async function insertRecord(db: Kysely<Tables>, r: StoredRecord): Promise<void> {
  await db
    .insertInto('records')
    .values({ id: r.id, collection: r.collection, version: r.version, data: JSON.stringify(r.data), created_at: r.createdAt, updated_at: r.updatedAt })
    .execute();
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

/** Records lacking a value for `field` (absent or null), for the "make it required" check. */
export async function anyRecordLacks(db: Kysely<Tables>, collection: string, field: string): Promise<boolean> {
  // JSON is text in both dialects; scanning in batches keeps memory flat on large collections.
  let after: string | null = null;
  for (;;) {
    const rows = await listRecordRows(db, collection, after, 1000);
    for (const r of rows) {
      const data = JSON.parse(r.data) as Record<string, unknown>;
      if (data[field] === undefined || data[field] === null) return true;
    }
    if (rows.length < 1000) return false;
    after = rows.at(-1)!.id;
  }
}
