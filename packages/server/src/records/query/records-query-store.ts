import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import { sqlOnce } from '../../db/compiled.js';
import { LruCache } from '../../lib/lru.js';
import type { QueryDialect } from '../../db/dialects/types.js';
import type { RecordsTable, Tables } from '../../db/tables.js';
import { COLLECTION_NAME } from '../fields.js';
import type { Filter } from './check.js';
import { filterSql, recordsFromSql, targetSql } from './compile.js';
import { textAfterPrefix, type SortValue } from './keyset-cursor.js';
import type { SortKey } from './sort.js';
import type { FeedPosition } from '../../events/feed-position.js';

export interface RecordQuery {
  collection: string;
  filter: Filter | null;
  sort: readonly SortKey[];
  after: KeysetPosition | null;
  /**
   * Names this filter and sort on this version of the collection (list-request.ts): the first page's statement,
   * which has no cursor values, is then compiled once and reused.
   */
  cacheKey?: string;
}

const STATEMENT_CACHE_SIZE = 256;
const statements = new WeakMap<Kysely<Tables>, LruCache<string, CompiledQuery<Record<string, unknown>>>>();

function firstPageStatement(db: Kysely<Tables>, key: string, build: () => CompiledQuery<Record<string, unknown>>): CompiledQuery<Record<string, unknown>> {
  let byKey = statements.get(db);
  if (!byKey) statements.set(db, (byKey = new LruCache(STATEMENT_CACHE_SIZE)));
  return byKey.getOrSet(key, build);
}

/** The collection as a constant: a partial index (WHERE collection = '…') is used only by queries naming it so. */
function collectionSql(collection: string): RawBuilder<unknown> {
  if (!COLLECTION_NAME.test(collection)) throw new Error(`not a collection name: ${collection}`);
  return sql.lit(collection);
}

/**
 * Where a page starts: after the row `id` whose sort values were `values`. `loose` (a key position, or null) says the
 * value of that key is only a prefix of the row's (a bounded cursor whose row changed since, keyset-cursor.ts): the
 * page then starts before every value with that prefix, so it may repeat rows but never skips one.
 */
export interface KeysetPosition {
  values: readonly SortValue[];
  id: string;
  loose: number | null;
}

/**
 * Rows after the cursor in sort order (each key, nulls last either way, then id): a disjunction over the key
 * positions, "equal on the keys before, after on this one". A null value has nothing after it but the nulls' ties.
 * At a loose key the last branch is "equal on the keys before, and this key at or after the prefix": ascending, at
 * least the prefix; descending, below the least text after every text that starts with it.
 */
function keysetSql(q: QueryDialect, sort: readonly SortKey[], after: KeysetPosition): RawBuilder<boolean> {
  const branches: Array<RawBuilder<boolean>> = [];
  const equal: Array<RawBuilder<boolean>> = [];
  const last = (condition: RawBuilder<boolean>) => sql<boolean>`(${sql.join([...equal, condition], sql.raw(' and '))})`;
  for (let i = 0; i < sort.length; i++) {
    const t = targetSql(q, sort[i]!.target);
    const expr = sql.raw(t.text);
    const v = after.values[i];
    if (i === after.loose && typeof v === 'string') {
      const bound = sort[i]!.desc ? textAfterPrefix(v) : v;
      const within = bound === null ? sql<boolean>`1 = 1` : sort[i]!.desc ? sql<boolean>`${expr} < ${q.param(bound, t.type)}` : sql<boolean>`${expr} >= ${q.param(bound, t.type)}`;
      branches.push(last(sql<boolean>`(${within} or ${expr} is null)`));
      return sql<boolean>`(${sql.join(branches, sql.raw(' or '))})`;
    }
    if (v === null || v === undefined) {
      equal.push(sql<boolean>`${expr} is null`);
      continue;
    }
    const p = q.param(v, t.type);
    const beyond = sort[i]!.desc ? sql<boolean>`${expr} < ${p}` : sql<boolean>`${expr} > ${p}`;
    branches.push(last(t.nullable ? sql<boolean>`(${beyond} or ${expr} is null)` : beyond));
    equal.push(sql<boolean>`${expr} = ${p}`);
  }
  branches.push(last(sql<boolean>`id > ${after.id}`));
  return sql<boolean>`(${sql.join(branches, sql.raw(' or '))})`;
}

/**
 * `from … where …` of a records query, built together: on PostgreSQL a `~` term reads the lowered value the FROM
 * clause makes (QueryDialect.loweredFrom), so the condition is never used without its relation.
 */
function fromWhereSql(q: QueryDialect, query: RecordQuery, withKeyset: boolean): RawBuilder<unknown> {
  const parts: Array<RawBuilder<boolean>> = [sql<boolean>`collection = ${collectionSql(query.collection)}`];
  // A page reads its rows (their sizes at least), so the check may look at each row's size too; a count keeps the
  // row check alone, which an index answers without reading the rows.
  const check = withKeyset ? q.recordCheck : q.rowCheck;
  if (check !== null) parts.push(sql.raw<boolean>(check));
  if (query.filter) parts.push(filterSql(q, query.filter));
  if (withKeyset && query.after) parts.push(keysetSql(q, query.sort, query.after));
  return sql`from ${recordsFromSql(q, query.filter)} where ${sql.join(parts, sql.raw(' and '))}`;
}

export interface MatchingRow {
  id: string;
  bytes: number;
  values: SortValue[];
  /** The row itself when its data is at most the inline size, else null (read later, only if the page has room). */
  row: RecordsTable | null;
}

/** The statement behind listMatching (the plan test explains it). */
export function matchingSql(q: QueryDialect, query: RecordQuery, limit: number, inlineMaxBytes = 0): RawBuilder<Record<string, unknown>> {
  const keys = query.sort.map((k) => ({ ...targetSql(q, k.target), desc: k.desc }));
  const columns = keys.map((k, i) => sql`, ${sql.raw(k.text)} as ${sql.ref(`s${i}`)}`);
  const order = keys.map((k) => sql`${sql.raw(k.text)} ${sql.raw(k.desc ? 'desc' : 'asc')} nulls last, `);
  const inline = sql.raw(String(Math.max(0, Math.floor(inlineMaxBytes))));
  return sql<Record<string, unknown>>`select id, version, created_at, updated_at, octet_length(data) as bytes,
    case when octet_length(data) <= ${inline} then data end as data${sql.join(columns, sql.raw(''))}
    ${fromWhereSql(q, query, true)} order by ${sql.join(order, sql.raw(''))}id limit ${q.limit(limit)}`;
}

/**
 * Up to `limit` matching records after the cursor, in sort order, with their data sizes and sort values; the data
 * itself only of rows of at most `inlineMaxBytes` (so one statement reads a page of ordinary records, and memory stays
 * within limit × inlineMaxBytes whatever the records' sizes).
 */
export async function listMatching(db: Kysely<Tables>, q: QueryDialect, query: RecordQuery, limit: number, inlineMaxBytes: number): Promise<MatchingRow[]> {
  const types = query.sort.map((k) => targetSql(q, k.target).type);
  const build = () => matchingSql(q, query, limit, inlineMaxBytes).compile(db);
  const statement = query.cacheKey !== undefined && query.after === null ? firstPageStatement(db, `${query.cacheKey}\u0000${limit}\u0000${Math.floor(inlineMaxBytes)}`, build) : build();
  const result = await db.executeQuery(statement);
  return result.rows.map((r) => ({
    id: r.id as string,
    bytes: Number(r.bytes),
    values: types.map((type, i) => q.readValue(r[`s${i}`], type)),
    row:
      typeof r.data === 'string'
        ? { id: r.id as string, collection: query.collection, version: Number(r.version), data: r.data, created_at: Number(r.created_at), updated_at: Number(r.updated_at) }
        : null,
  }));
}

/**
 * One record's sort values as the list statement reads them (the same expressions, the same conversions), or null
 * when the record is gone: a bounded cursor's row, read again to find where its page ends (list-request.ts).
 */
export async function sortValuesOf(db: Kysely<Tables>, q: QueryDialect, collection: string, sort: readonly SortKey[], id: string): Promise<SortValue[] | null> {
  const keys = sort.map((k) => targetSql(q, k.target));
  if (keys.length === 0) return [];
  const columns = keys.map((k, i) => sql`${sql.raw(k.text)} as ${sql.ref(`s${i}`)}`);
  const r = await sql<Record<string, unknown>>`select ${sql.join(columns)} from records where collection = ${collectionSql(collection)} and id = ${id}`.execute(db);
  const row = r.rows[0];
  return row ? keys.map((k, i) => q.readValue(row[`s${i}`], k.type)) : null;
}

/** The named records of a collection, data still JSON text, in no particular order. */
export async function listRecordsByIds(db: Kysely<Tables>, collection: string, ids: readonly string[]): Promise<RecordsTable[]> {
  if (ids.length === 0) return [];
  // Every filtered page runs this: its text is built once per id count (sqlOnce). Parameters: collection, the ids.
  const text = sqlOnce(db, `records-by-ids-${ids.length}`, (d) =>
    d.selectFrom('records').selectAll().where('collection', '=', '').where('id', 'in', ids.map(() => '')),
  );
  return (await db.executeQuery<RecordsTable>(CompiledQuery.raw(text, [collection, ...ids]))).rows;
}

/** Where a check looks: every record of the collection, or only those an event after this feed position created or updated. */
export type MatchingScope = { changedAfter: FeedPosition | null };

/**
 * A record of the collection that matches the filter, or null (the "make a field required" check: none may lack it).
 * `stoppable` adds the row check, for a run where records queries run (database.queries: a reader thread on SQLite,
 * the query timeout on both); without it the statement runs to its end wherever it is given, which the callers keep
 * to a scope of the few records written while an earlier, stoppable check ran.
 */
export async function firstMatching(db: Kysely<Tables>, q: QueryDialect, collection: string, filter: Filter, scope: MatchingScope, stoppable: boolean): Promise<string | null> {
  const parts: Array<RawBuilder<boolean>> = [sql<boolean>`collection = ${collectionSql(collection)}`];
  if (stoppable && q.recordCheck !== null) parts.push(sql.raw<boolean>(q.recordCheck));
  const after = scope.changedAfter;
  if (after !== null) {
    // The events of a write commit with it, at positions after every position readable before it (feed-store.ts).
    parts.push(sql<boolean>`id in (select record_id from events where collection = ${collection} and position is not null
      and (tx, position) > (${after.tx}, ${after.position}) and topic in ('record.created', 'record.updated'))`);
  }
  parts.push(filterSql(q, filter));
  const r = await sql<{ id: string }>`select id from ${recordsFromSql(q, filter)} where ${sql.join(parts, sql.raw(' and '))} limit 1`.execute(db);
  return r.rows[0]?.id ?? null;
}

export async function countMatching(db: Kysely<Tables>, q: QueryDialect, query: RecordQuery): Promise<number> {
  const r = await sql<{ n: number | string }>`select count(*) as n ${fromWhereSql(q, query, false)}`.execute(db);
  return Number(r.rows[0]!.n);
}
