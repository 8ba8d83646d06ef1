import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/db/group-commit.js';
import type { Tables } from '../../src/db/tables.js';

/** Real SQLite (WAL, synchronous=FULL as shipped); the statements are counted through Kysely's query log. */
function open() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-gc-'));
  const native = new SQLite(join(dir, 'gc.db'));
  native.pragma('journal_mode = WAL');
  native.pragma('synchronous = FULL');
  native.exec('create table t (id integer primary key, v text not null unique)');
  const statements: string[] = [];
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: native }), log: (e) => void statements.push(e.query.sql) });
  const rows = () => native.prepare('select v from t order by id').all().map((r) => (r as { v: string }).v);
  return { db, native, statements, rows, close: async () => (await db.destroy(), rmSync(dir, { recursive: true, force: true })) };
}

const insert = (v: string) => (trx: Kysely<Tables>) => sql`insert into t (v) values (${v})`.execute(trx).then(() => v);

describe('GroupCommit', () => {
  let env: ReturnType<typeof open> | null = null;
  afterEach(async () => {
    await env?.close();
    env = null;
  });

  it('writes that arrive together share one transaction, each in its own savepoint', async () => {
    env = open();
    const group = new GroupCommit(env.db);
    const values = Array.from({ length: 20 }, (_, i) => `v${i}`);
    expect(await Promise.all(values.map((v) => group.run(insert(v))))).toEqual(values);
    expect(env.rows()).toEqual(values);
    expect(env.statements.filter((s) => s === 'savepoint grouped')).toHaveLength(20);
  });

  it('a failing write is rolled back alone and rejected; the others commit', async () => {
    env = open();
    const group = new GroupCommit(env.db);
    const results = await Promise.allSettled([
      group.run(insert('a')),
      group.run(async (trx) => {
        await insert('half-done')(trx);
        throw new Error('refused');
      }),
      group.run(insert('a')), // unique violation: its own failure
      group.run(insert('b')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('refused');
    expect(String((results[2] as PromiseRejectedResult).reason.code)).toMatch(/^SQLITE_CONSTRAINT/);
    expect(env.rows()).toEqual(['a', 'b']);
  });

  it('a lone write runs without savepoints and its failure leaves nothing behind', async () => {
    env = open();
    const group = new GroupCommit(env.db);
    await expect(group.run(insert('only'))).resolves.toBe('only');
    await expect(
      group.run(async (trx) => {
        await insert('gone')(trx);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(env.rows()).toEqual(['only']);
    expect(env.statements).not.toContain('savepoint grouped');
  });

  it('a write that arrives during a commit goes into the next batch, not lost', async () => {
    env = open();
    const group = new GroupCommit(env.db);
    let later: Promise<string> | null = null;
    const first = group.run(async (trx) => {
      // Queued while this batch is running: must be picked up by a later flush.
      later = group.run(insert('late'));
      return insert('early')(trx);
    });
    await first;
    await expect(later!).resolves.toBe('late');
    expect(env.rows()).toEqual(['early', 'late']);
  });
});
