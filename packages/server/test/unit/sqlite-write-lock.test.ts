import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/db/dialects/sqlite.js';
import type { Database } from '../../src/db/connect.js';

/**
 * A writer of another process as `svc serve` has it: its own connection, busy_timeout 5000 (SQLite's busy handler,
 * which sleeps on the thread that waits). Told to write, it says when it began waiting, then when it got the lock.
 */
const WAITER = `
const { parentPort, workerData } = require('node:worker_threads');
const db = new (require(workerData.driver))(workerData.path);
db.pragma('busy_timeout = 5000');
const waiting = new Int32Array(workerData.shared, 0, 1);
const times = new Float64Array(workerData.shared, 8, 2);
const now = () => performance.timeOrigin + performance.now();
parentPort.on('message', () => {
  times[0] = now();
  Atomics.store(waiting, 0, 1);
  Atomics.notify(waiting, 0);
  db.exec('begin immediate');
  times[1] = now();
  db.exec('commit');
  parentPort.postMessage(null);
});`;

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

  // `svc prune` beside a server rests this long between two batches (retention.ts, caps.restAfterWrite). Each hold
  // here ends just after one of the waiter's tries (1, 3, 8, 18, 33, 53, 78, 128 and 228 ms into its wait), where its
  // next is furthest away; then, after the rest, a transaction begins again as the next batch would.
  it('a writer that waited through a transaction takes the lock during the rest after it, before the next one', async () => {
    const shared = new SharedArrayBuffer(24);
    const waiting = new Int32Array(shared, 0, 1);
    const times = new Float64Array(shared, 8, 2);
    const now = () => performance.timeOrigin + performance.now();
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const waiter = new Worker(WAITER, { eval: true, workerData: { driver, path: join(dir, 'svc.db'), shared } });
    try {
      for (const holdMs of [2, 4, 9, 19, 34, 54, 79, 129, 229]) {
        const written = new Promise((resolve) => waiter.once('message', resolve));
        await a.db.transaction().execute(async (trx) => {
          await sql`update t set n = n + 1 where id = 1`.execute(trx);
          Atomics.store(waiting, 0, 0);
          waiter.postMessage(null);
          Atomics.wait(waiting, 0, 0, 5_000);
          while (now() - times[0]! < holdMs);
        });
        const committed = now();
        const restMs = a.caps.restAfterWrite(committed - times[0]!);
        await new Promise((resolve) => setTimeout(resolve, restMs));
        let next = 0;
        await a.db.transaction().execute(async () => {
          next = now();
        });
        await written;
        const after = `held ${(committed - times[0]!).toFixed(1)} ms, rest ${restMs} ms: the waiter got the lock ${(times[1]! - committed).toFixed(1)} ms after the commit`;
        expect(times[1]!, after).toBeLessThan(next);
      }
    } finally {
      await waiter.terminate();
    }
  });
});
