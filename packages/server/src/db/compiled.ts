import { CompiledQuery, sql, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import type { DialectCapabilities } from './dialects/types.js';
import { NeedsTransaction } from './run-again.js';
import type { Tables } from './tables.js';

const texts = new WeakMap<object, Map<string, string>>();

/**
 * What the caches below are kept by: the database's adapter, which a Kysely instance and every transaction it opens
 * share (a transaction is a new Kysely object each time, so keyed by it a text built inside one was built again in
 * the next: every write transaction built its inserts anew). One adapter, one dialect, one placeholder style.
 */
const cacheKey = (db: Kysely<Tables>): object => db.getExecutor().adapter;

/**
 * The SQL text of a hot query, built with Kysely once per database and then run as
 * `CompiledQuery.raw(text, parameters)`: on the request path, building and compiling a query cost more than
 * SQLite takes to run it. Per database because placeholders differ (? on SQLite, $1 on PostgreSQL). The builder's
 * stand-in values are never sent; callers pass parameters in the order they appear in the SQL.
 */
export function sqlOnce(db: Kysely<Tables>, name: string, build: (db: Kysely<Tables>) => Compilable): string {
  const key = cacheKey(db);
  let byName = texts.get(key);
  if (!byName) texts.set(key, (byName = new Map()));
  let text = byName.get(name);
  if (text === undefined) byName.set(name, (text = build(db).compile().sql));
  return text;
}

/** Stands for one row value in a statement built once: replaced by the value when the statement runs. */
class Slot {
  constructor(readonly index: number) {}
}

interface RowsStatement {
  sql: string;
  /** The statement's parameters: a row value's index (row-major), or a constant of the statement (`fixed`'s). */
  parameters: Array<number | { constant: unknown }>;
}

const rowStatements = new WeakMap<object, Map<string, RowsStatement>>();

/**
 * Rows per insert statement: few statement texts to keep (one per row count up to this, for each insert's name), far
 * from either database's parameter limit.
 */
export const ROWS_PER_INSERT = 100;

export interface InsertRows<T extends keyof Tables & string> {
  /** Names the statement's texts (one per row count) in the cache; one name, one table and column list. */
  name: string;
  table: T;
  /** The columns every row gives a value for, in the order of each row's values. */
  columns: ReadonlyArray<keyof Tables[T] & string>;
  /** Columns set by one SQL expression for every row, e.g. PostgreSQL's `nextval`. */
  fixed?: Readonly<Record<string, RawBuilder<unknown>>>;
}

/**
 * Inserts `rows` (values in `spec.columns` order) with one multi-row statement per ROWS_PER_INSERT rows. Each
 * statement's SQL is built with Kysely once per row count and database, then run with the rows' values: a batch of
 * creates costs one statement per table instead of one per row, and no query building on the request path.
 */
export async function insertRows<T extends keyof Tables & string>(db: Kysely<Tables>, spec: InsertRows<T>, rows: ReadonlyArray<readonly unknown[]>): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const chunk = rows.slice(start, start + ROWS_PER_INSERT);
    await run(db, rowsStatement(db, spec, chunk.length), [chunk]);
  }
}

/** Runs a statement built once with the rows' values in its Slots' order (the groups' rows, one after another). */
async function run(db: Kysely<Tables>, statement: RowsStatement, groups: ReadonlyArray<ReadonlyArray<readonly unknown[]>>): Promise<unknown[]> {
  // Loops, not flat() and map(): this runs for every value of every row written (a batch's are thousands).
  const values: unknown[] = [];
  for (const rows of groups) for (const row of rows) for (const v of row) values.push(v);
  const parameters = new Array<unknown>(statement.parameters.length);
  for (let i = 0; i < parameters.length; i++) {
    const p = statement.parameters[i]!;
    parameters[i] = typeof p === 'number' ? values[p] : p.constant;
  }
  return (await db.executeQuery(CompiledQuery.raw(statement.sql, parameters))).rows;
}

function rowsStatement<T extends keyof Tables & string>(db: Kysely<Tables>, spec: InsertRows<T>, count: number): RowsStatement {
  return cachedStatement(db, `${spec.name}\0${count}`, () => insertOf(spec as unknown as AnyInsert, count, 0));
}

/** A statement's text and parameters, built once per database and key; its row values stand as Slots. */
function cachedStatement(db: Kysely<Tables>, key: string, build: () => RawBuilder<unknown>): RowsStatement {
  const cache = cacheKey(db);
  let byKey = rowStatements.get(cache);
  if (!byKey) rowStatements.set(cache, (byKey = new Map()));
  let statement = byKey.get(key);
  if (statement) return statement;
  const compiled = build().compile(db);
  byKey.set(key, (statement = { sql: compiled.sql, parameters: compiled.parameters.map((p) => (p instanceof Slot ? p.index : { constant: p })) }));
  return statement;
}

/** The insert of `count` rows of `spec`, its values Slots numbered from `first` (row-major). */
function insertOf(spec: AnyInsert, count: number, first: number): RawBuilder<unknown> {
  const width = spec.columns.length;
  const fixed = Object.entries(spec.fixed ?? {});
  const columns = [...spec.columns, ...fixed.map(([c]) => c)];
  const tuples = Array.from({ length: count }, (_, r) => {
    const values = spec.columns.map((_c, i) => sql`${new Slot(first + r * width + i)}`);
    return sql`(${sql.join([...values, ...fixed.map(([, expression]) => expression)])})`;
  });
  return sql`insert into ${sql.table(spec.table)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${sql.join(tuples)}`;
}

/** One insert of several that run together: its rows. */
export type InsertPart = {
  [T in keyof Tables & string]: { spec: InsertRows<T>; rows: ReadonlyArray<readonly unknown[]> };
}[keyof Tables & string];

/** An insert's shape whatever its table (the columns checked where the spec is written). */
type AnyInsert = Pick<InsertRows<'events'>, 'name' | 'fixed'> & { table: string; columns: readonly string[] };

/**
 * Shapes of inserts run together (the parts' names and row counts) kept as texts per database. The common
 * ones come first and stay (a create, a change, a small batch, with their targets' jobs); a shape past them runs its
 * inserts apart, each from the per-row-count texts above. Without the bound, every mix of row counts that requests can
 * make (records × matching targets' jobs × traced or not) would be a text kept for the life of the process.
 */
const TOGETHER_SHAPES_MAX = 256;
const togetherShapes = new WeakMap<object, number>();

/**
 * The inserts of one write (a create's records, the events, their jobs) as one statement where the database has it
 * (DialectCapabilities.together: one round trip instead of one each, on PostgreSQL), else one after another, in order.
 * PostgreSQL runs the parts of one statement on one snapshot in no set order, so no part may depend on another's rows
 * (none does: no foreign key or trigger links records, events and delivery jobs). Parts without rows are left out; a
 * part of more than ROWS_PER_INSERT rows, or a shape past TOGETHER_SHAPES_MAX, runs them all apart.
 *
 * `check` is an expression of one value (the targets a write planned with: webhooks/targets-cache.ts) that fails the
 * statement when it no longer holds: it rides with the inserts, on their snapshot, where they run together, and is
 * selected after them where they run apart. `oneStatement`: the write runs outside a transaction (Database.
 * writeStatement), so its inserts and check must be one statement; where they cannot, NeedsTransaction is thrown
 * before anything is written.
 */
export async function insertTogether(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  parts: readonly InsertPart[],
  opts: { check?: Check | null; oneStatement?: boolean } = {},
): Promise<void> {
  const present = parts.filter((p) => p.rows.length > 0);
  const check = opts.check ?? null;
  const apart = async () => {
    if (opts.oneStatement && present.length + (check === null ? 0 : 1) > 1) throw new NeedsTransaction('inserts apart');
    for (const p of present) await insertRows(db, p.spec as AnyInsert as InsertRows<'events'>, p.rows);
    if (check !== null) await run(db, cachedStatement(db, `check\0${check.name}`, () => sql`select ${check.expression(sql`${new Slot(0)}`)} as checked`), [[[check.value]]]);
  };
  const together = caps.together;
  // One insert goes alone, unless a check rides with it.
  if (together === null || present.length < (check === null ? 2 : 1) || present.some((p) => p.rows.length > ROWS_PER_INSERT)) return apart();
  const key = present.map((p) => `${p.spec.name}\0${p.rows.length}`).join('\0\0') + (check === null ? '' : `\0\0check\0${check.name}`);
  const cache = cacheKey(db);
  if (!rowStatements.get(cache)?.has(key)) {
    const shapes = togetherShapes.get(cache) ?? 0;
    if (shapes >= TOGETHER_SHAPES_MAX) return apart();
    togetherShapes.set(cache, shapes + 1);
  }
  const statement = cachedStatement(db, key, () => {
    let first = 0;
    const built = present.map((p) => {
      const insert = insertOf(p.spec as AnyInsert, p.rows.length, first);
      first += p.rows.length * p.spec.columns.length;
      return insert;
    });
    // The check's value is the statement's last parameter.
    return together(built, check === null ? null : check.expression(sql`${new Slot(first)}`));
  });
  await run(db, statement, check === null ? present.map((p) => p.rows) : [...present.map((p) => p.rows), [[check.value]]]);
}

/** An expression insertTogether runs with the inserts; `name` keys its statement texts (one expression per name). */
export interface Check {
  name: string;
  /** The expression, given its value's placeholder. */
  expression: (value: RawBuilder<unknown>) => RawBuilder<unknown>;
  value: unknown;
}
