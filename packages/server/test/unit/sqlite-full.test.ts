import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyDatabaseError } from '../../src/db/database-errors.js';
import { openSqlite } from '../../src/db/dialects/sqlite.js';
import type { Database } from '../../src/db/dialects/types.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import type { Tables } from '../../src/db/tables.js';

/**
 * A SQLite database that cannot grow fails a write with SQLITE_FULL and rolls the whole transaction back by itself,
 * as a full disk does (`pragma max_page_count` makes that happen for real, without filling a disk; the disk itself
 * is outages-sqlite-disk.test.ts). The write must fail with SQLITE_FULL (507 storage_full), never with the error of
 * the rollback that comes after ("no transaction is active", "no such savepoint": 500), and the connection must take
 * the next write once there is room again.
 */
const BIG = 'x'.repeat(6000);

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function open() {
  dir = mkdtempSync(join(tmpdir(), 'svc-full-'));
  const native = new SQLite(join(dir, 'full.db'));
  native.pragma('journal_mode = WAL');
  native.exec('create table t (v text not null)');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: native }) });
  const pages = () => Number(native.pragma('page_count', { simple: true }));
  const count = () => Number((native.prepare('select count(*) as n from t').get() as { n: number }).n);
  return { native, db, pages, count };
}

const insert = (trx: Kysely<Tables>) => sql`insert into t (v) values (${BIG})`.execute(trx).then(() => 'ok');

describe('GroupCommit on a full database', () => {
  it('a lone write fails with SQLITE_FULL, and the next one commits once there is room', async () => {
    const { native, db, pages, count } = open();
    const group = new GroupCommit(db);
    native.pragma(`max_page_count = ${pages()}`);
    const err = await group.run(insert).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('SQLITE_FULL');
    expect(classifyDatabaseError(err)).toBe('storage_full');
    expect(native.inTransaction).toBe(false);
    native.pragma('max_page_count = 1000000');
    await expect(group.run(insert)).resolves.toBe('ok');
    expect(count()).toBe(1);
    await db.destroy();
  });

  it('a group whose commit SQLite gave up fails every write of it with SQLITE_FULL: none of them is durable', async () => {
    const { native, db, pages, count } = open();
    const group = new GroupCommit(db);
    // Room for about one more record: the first writes of the group fit, a later one does not.
    native.pragma(`max_page_count = ${pages() + 3}`);
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => group.run(insert)));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill('rejected'));
    for (const r of results) expect(((r as PromiseRejectedResult).reason as { code?: string }).code).toBe('SQLITE_FULL');
    expect(count()).toBe(0);
    native.pragma('max_page_count = 1000000');
    const again = await Promise.all(Array.from({ length: 6 }, () => group.run(insert)));
    expect(again).toEqual(Array(6).fill('ok'));
    expect(count()).toBe(6);
    await db.destroy();
  });
});

describe("svc's SQLite database on a full disk", () => {
  let database: Database | null = null;
  afterEach(async () => {
    await database?.close();
    database = null;
  });

  it("any transaction's failure is SQLITE_FULL, not its rollback's; writes work again once there is room", async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-full-'));
    database = openSqlite(join(dir, 'svc.db'), 'FULL');
    const { db } = database;
    await sql`create table t (v text not null)`.execute(db);
    const [{ page_count }] = (await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows as [{ page_count: number }];
    await sql.raw(`pragma max_page_count = ${page_count}`).execute(db);
    // Kysely's own transaction (admin writes, the worker's claims and results) and the records' group commit.
    const viaTransaction = await db.transaction().execute(insert).catch((e: unknown) => e);
    const viaWrite = await database.write(insert).catch((e: unknown) => e);
    expect([viaTransaction, viaWrite].map((e) => (e as { code?: string }).code)).toEqual(['SQLITE_FULL', 'SQLITE_FULL']);
    await sql.raw('pragma max_page_count = 1000000').execute(db);
    await expect(db.transaction().execute(insert)).resolves.toBe('ok');
    await expect(database.write(insert)).resolves.toBe('ok');
  });
});
