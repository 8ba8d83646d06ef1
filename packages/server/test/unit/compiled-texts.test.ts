import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { insertRows, sqlOnce } from '../../src/db/compiled.js';
import type { Tables } from '../../src/db/tables.js';

/**
 * Statement texts built once per database, transactions included: a transaction is a new Kysely object each time, and
 * a cache kept by that object built the write path's inserts again in every transaction (~70 µs a build here).
 */
describe('texts built once (db/compiled.ts)', () => {
  const open = () => {
    const native = new SQLite(':memory:');
    native.exec('create table api_tokens (id text primary key, name text not null)');
    return { native, db: new Kysely<Tables>({ dialect: new SqliteDialect({ database: native }) }) };
  };

  it('sqlOnce builds a text once for a database and every transaction it opens, and again for another database', async () => {
    const { db } = open();
    let builds = 0;
    const build = (d: Kysely<Tables>) => (builds++, d.selectFrom('api_tokens').select('id').where('id', '=', ''));
    const outside = sqlOnce(db, 'compiled-texts-probe', build);
    for (let i = 0; i < 3; i++) await db.transaction().execute(async (trx) => void expect(sqlOnce(trx, 'compiled-texts-probe', build)).toBe(outside));
    expect(builds).toBe(1);
    sqlOnce(open().db, 'compiled-texts-probe', build);
    expect(builds).toBe(2);
  });

  it('insertRows builds a row count\'s statement once across transactions, and the rows land', async () => {
    const { db, native } = open();
    const built: string[] = [];
    // `fixed` is read only when a row count's statement is built, never when it is taken from the cache.
    const spec = {
      name: 'compiled-texts-insert',
      table: 'api_tokens',
      columns: ['id', 'name'],
      get fixed() {
        built.push('build');
        return undefined;
      },
    } as const;
    for (let i = 0; i < 3; i++) await db.transaction().execute((trx) => insertRows(trx, spec, [[`t${i}`, `name ${i}`]]));
    expect(built).toEqual(['build']);
    expect(native.prepare('select id, name from api_tokens order by id').all()).toEqual([0, 1, 2].map((i) => ({ id: `t${i}`, name: `name ${i}` })));
  });
});
