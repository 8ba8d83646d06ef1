import type { Compilable, Kysely } from 'kysely';
import type { Tables } from './tables.js';

const texts = new WeakMap<Kysely<Tables>, Map<string, string>>();

/**
 * The SQL text of a hot query, built with Kysely once per database and then run as
 * `CompiledQuery.raw(text, parameters)`: on the request path, building and compiling a query cost more than
 * SQLite takes to run it. Per database because placeholders differ (? on SQLite, $1 on PostgreSQL). The builder's
 * stand-in values are never sent; callers pass parameters in the order they appear in the SQL.
 */
export function sqlOnce(db: Kysely<Tables>, name: string, build: (db: Kysely<Tables>) => Compilable): string {
  let byName = texts.get(db);
  if (!byName) texts.set(db, (byName = new Map()));
  let text = byName.get(name);
  if (text === undefined) byName.set(name, (text = build(db).compile().sql));
  return text;
}
