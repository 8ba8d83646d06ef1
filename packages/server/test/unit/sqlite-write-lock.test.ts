import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/db/dialects/sqlite.js';
import type { Database } from '../../src/db/connect.js';

/**
 * Two processes on one SQLite file (`svc prune` beside `svc serve`): a transaction that reads, then writes, must not be
 * refused because the other committed in between. Transactions begin immediate, so they take the write lock first.
 */
describe('SQLite transactions take the write lock when they begin', () => {
  let dir: string;
  let a: Database;
  let b: Database;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
    a = openSqlite(join(dir, 'svc.db'), 'NORMAL');
    b = openSqlite(join(dir, 'svc.db'), 'NORMAL');
    await sql`create table t (id integer primary key, n integer)`.execute(a.db);
    await sql`insert into t (id, n) values (1, 0)`.execute(a.db);
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a read-then-write transaction is not refused by a commit between its read and its write', async () => {
    let between: unknown = null;
    await b.db.transaction().execute(async (trx) => {
      await sql`select n from t where id = 1`.execute(trx);
      // The other connection tries to commit a write here. With a deferred begin it would succeed, and this
      // transaction's write below would then fail with SQLITE_BUSY_SNAPSHOT; begun immediate, it is the other that
      // has to wait (and, with a short busy timeout, gives up).
      try {
        await sql`pragma busy_timeout = 50`.execute(a.db);
        await sql`update t set n = n + 10 where id = 1`.execute(a.db);
      } catch (err) {
        between = err;
      }
      await sql`update t set n = n + 1 where id = 1`.execute(trx);
    });
    expect((between as { code?: string } | null)?.code).toBe('SQLITE_BUSY');
    const { rows } = await sql<{ n: number }>`select n from t where id = 1`.execute(a.db);
    expect(rows[0]!.n).toBe(1);
  });
});
