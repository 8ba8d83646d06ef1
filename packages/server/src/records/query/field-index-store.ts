import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { QueryDialect } from '../../db/dialects/types.js';
import { AppError } from '../../errors.js';
import type { Tables } from '../../db/tables.js';
import { COLLECTION_NAME, FIELD_NAME, type Field } from '../fields.js';

/** The index of one indexed field: its name is derived from collection and field, so it needs no bookkeeping. */
export const fieldIndexName = (collection: string, field: string): string =>
  `records_ix_${createHash('sha256').update(`${collection}\u0000${field}`).digest('hex').slice(0, 24)}`;

function checkedNames(collection: string, field: string): void {
  // Both are spliced into DDL (an index is matched by its exact text): they must be the validated identifiers.
  if (!COLLECTION_NAME.test(collection) || !FIELD_NAME.test(field)) throw new Error('not a collection or field name');
}

/**
 * Builds the index of an indexed field, on the very expression the filter compiler emits for it (compile.ts), and
 * returns once it is usable. A build that fails (on PostgreSQL a concurrent build leaves an invalid index behind) is
 * cleaned up before the error goes on. An index of that name found before the build is a leftover (see
 * dropLeftoverIndex) and is dropped first: `if not exists` would keep it, invalid or on another type's expression.
 */
export async function buildFieldIndex(db: Kysely<Tables>, q: QueryDialect, collection: string, field: Field): Promise<void> {
  checkedNames(collection, field.name);
  const index = fieldIndexName(collection, field.name);
  try {
    const expression = q.field(field.name, field.type);
    if ((await q.indexState(index).execute(db)).rows.length > 0) await dropAll(db, q, index);
    await sql.raw(q.createIndex(index, collection, expression)).execute(db);
    const state = (await q.indexState(index).execute(db)).rows[0];
    if (!state || !state.valid) throw new Error(`index ${index} was not built`);
    for (const statement of q.createStatistics(index, expression, field.type)) await sql.raw(statement).execute(db);
    for (const statement of q.analyzeIndex(index)) await sql.raw(statement).execute(db);
  } catch (err) {
    await dropAll(db, q, index).catch(() => {});
    // A record written before the field was indexed holds a value longer than an index entry takes (PostgreSQL).
    if (q.valueTooLongForIndex(err)) {
      throw new AppError('conflict', `A record holds a value of "${field.name}" longer than an indexed text field holds on this database (${q.indexedTextMaxBytes ?? 0} bytes of UTF-8): shorten it before indexing the field.`);
    }
    throw err;
  }
}

async function dropAll(db: Kysely<Tables>, q: QueryDialect, index: string): Promise<void> {
  await sql.raw(q.dropIndex(index)).execute(db);
  for (const statement of q.dropStatistics(index)) await sql.raw(statement).execute(db);
}

/**
 * Drops the index of a field that the schema does not declare indexed, if one exists. Index names are derived from
 * collection and field, not kept, so a process killed between building an index and committing the schema that names
 * it (PostgreSQL even finishes a concurrent build whose client died), or between a collection's deleting commit and
 * the drop of its indexes, leaves one that a later collection of the same name inherits: on PostgreSQL an index on
 * `(data ->> 'x')::numeric` made every write of a text `x` into the new collection fail (500 internal).
 */
export async function dropLeftoverIndex(db: Kysely<Tables>, q: QueryDialect, collection: string, field: string): Promise<void> {
  checkedNames(collection, field);
  const index = fieldIndexName(collection, field);
  if ((await q.indexState(index).execute(db)).rows.length > 0) await dropAll(db, q, index);
}

export async function dropFieldIndex(db: Kysely<Tables>, q: QueryDialect, collection: string, field: string): Promise<void> {
  checkedNames(collection, field);
  await dropAll(db, q, fieldIndexName(collection, field));
}

/** The database's plan for a statement, as text (the plan test reads it). */
export async function explainPlan(db: Kysely<Tables>, q: QueryDialect, statement: { sql: string; parameters: readonly unknown[] }): Promise<string> {
  const rows = (await db.executeQuery<Record<string, unknown>>({ sql: `${q.explain} ${statement.sql}`, parameters: statement.parameters, query: { kind: 'RawNode' } as never, queryId: { queryId: 'explain' } })).rows;
  return rows.map((r) => Object.values(r).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ')).join('\n');
}
