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
  fields: fieldsOf(r.fields),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * A collection's stored field list, parsed once per text: every record request reads its collection, and the text
 * changes only when the schema does. Frozen, since one list is shared by every request that reads the same text.
 */
const parsedFields = new Map<string, readonly Field[]>();
const PARSED_FIELDS_KEPT = 256;

function fieldsOf(text: string): Field[] {
  let fields = parsedFields.get(text);
  if (fields === undefined) {
    // Collections stored before indexed fields existed lack the flag.
    fields = Object.freeze(
      (JSON.parse(text) as Field[]).map((f) => Object.freeze({ name: f.name, type: f.type, required: f.required, indexed: f.indexed === true })),
    );
    // Bounded: a process that has seen many schemas (collections edited over months) starts over.
    if (parsedFields.size >= PARSED_FIELDS_KEPT) parsedFields.clear();
    parsedFields.set(text, fields);
  }
  // Typed as Collection's mutable list for the answers' schemas; frozen, so a write to it throws rather than leak.
  return fields as Field[];
}

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

/** The collections' version (migration 023): every committed change to a collection, by any process, moves it. */
export async function collectionsVersion(db: Kysely<Tables>): Promise<number> {
  const { version } = await db.selectFrom('collections_version').select('version').where('id', '=', 1).executeTakeFirstOrThrow();
  return Number(version);
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
 * the count is exactly what the delete removed. SQLite's write transactions hold the single write lock. Without
 * `force`, a collection that holds records is left as it is: 'holds-records'.
 */
export async function deleteCollectionCounting(trx: Kysely<Tables>, caps: DialectCapabilities, name: string, force: boolean): Promise<number | null | 'holds-records'> {
  await caps.lockRow(trx, 'collections', 'name', name);
  // Without force, refused before anything is deleted: counting every record and cascading the delete to all of
  // them, then rolling it all back, held the write lock (on SQLite the event loop) as long as deleting them would.
  // (A record names an existing collection: the foreign key.)
  if (!force && (await trx.selectFrom('records').select(sql<number>`1`.as('one')).where('collection', '=', name).limit(1).executeTakeFirst()) !== undefined) return 'holds-records';
  const { n } = await trx.selectFrom('records').select((eb) => eb.fn.countAll<number | string>().as('n')).where('collection', '=', name).executeTakeFirstOrThrow();
  return (await deleteCollection(trx, name)) ? Number(n) : null;
}

export async function deleteCollection(db: Kysely<Tables>, name: string): Promise<boolean> {
  const res = await db.deleteFrom('collections').where('name', '=', name).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}
