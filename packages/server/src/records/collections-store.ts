import { sql, type Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { CollectionsTable, Tables } from '../db/tables.js';
import type { Field } from './fields.js';

export interface Collection {
  name: string;
  fields: Field[];
  createdAt: number;
  updatedAt: number;
}

export const toCollection = (r: CollectionsTable): Collection => ({
  name: r.name,
  // Collections stored before indexed fields existed lack the flag.
  fields: (JSON.parse(r.fields) as Field[]).map((f) => ({ name: f.name, type: f.type, required: f.required, indexed: f.indexed === true })),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function insertCollection(db: Kysely<Tables>, c: Collection): Promise<void> {
  await db
    .insertInto('collections')
    .values({ name: c.name, fields: JSON.stringify(c.fields), created_at: c.createdAt, updated_at: c.updatedAt })
    .execute();
}

export async function findCollection(db: Kysely<Tables>, name: string): Promise<Collection | null> {
  const row = await db.selectFrom('collections').selectAll().where('name', '=', name).executeTakeFirst();
  return row ? toCollection(row) : null;
}

export async function listCollections(db: Kysely<Tables>, afterName: string | null, limit: number): Promise<Collection[]> {
  let q = db.selectFrom('collections').selectAll().orderBy('name').limit(limit);
  if (afterName !== null) q = q.where('name', '>', afterName);
  return (await q.execute()).map(toCollection);
}

/** Guarded by the previous updated_at so two concurrent PATCHes cannot both apply to the same starting point. */
export async function updateCollectionFields(db: Kysely<Tables>, name: string, fields: Field[], previousUpdatedAt: number, now: number): Promise<boolean> {
  const res = await db
    .updateTable('collections')
    .set({ fields: JSON.stringify(fields), updated_at: now })
    .where('name', '=', name)
    .where('updated_at', '=', previousUpdatedAt)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Inside the caller's transaction: the collection and its records (the foreign key cascades), and how many records
 * went with it; null when there is no such collection. On PostgreSQL its row is locked first, in a statement of its
 * own: a record insert checks that row (FOR KEY SHARE), so no record commits between the count and the delete, and
 * the count is exactly what the delete removed. SQLite's write transactions hold the single write lock.
 */
export async function deleteCollectionCounting(trx: Kysely<Tables>, caps: DialectCapabilities, name: string): Promise<number | null> {
  await caps.lockRow(trx, 'collections', 'name', name);
  const { n } = await trx.selectFrom('records').select((eb) => eb.fn.countAll<number | string>().as('n')).where('collection', '=', name).executeTakeFirstOrThrow();
  return (await deleteCollection(trx, name)) ? Number(n) : null;
}

export async function deleteCollection(db: Kysely<Tables>, name: string): Promise<boolean> {
  const res = await db.deleteFrom('collections').where('name', '=', name).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}
