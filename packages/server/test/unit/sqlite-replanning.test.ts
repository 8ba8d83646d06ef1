import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/db/dialects/sqlite.js';
import type { Database } from '../../src/db/connect.js';

/**
 * STAT4 samples of an index make SQLite plan every statement whose parameters constrain the index's columns again
 * whenever a parameter is bound, and better-sqlite3 binds every parameter on every run: ANALYZE's samples are dropped,
 * its counts kept (sqlite.ts WITHOUT_SAMPLES).
 */
describe('SQLite keeps no STAT4 samples', () => {
  describe('on a database file', () => {
    let dir: string;
    let path: string;
    let database: Database | null;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'svc-replan-'));
      path = join(dir, 'svc.db');
      database = null;
    });
    afterEach(async () => {
      await database?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('keeps no STAT4 samples after an index is analyzed, after the hourly refresh, or from an older database', async () => {
      // An older svc's database: an index analyzed with samples.
      const older = new SQLite(path);
      older.exec('create table t (id integer primary key, status text); create index t_status on t (status)');
      const insert = older.prepare('insert into t (status) values (?)');
      older.transaction(() => {
        for (let i = 0; i < 2000; i++) insert.run(i % 50 === 0 ? 'rare' : 'common');
      })();
      older.exec('analyze');
      expect(older.prepare('select count(*) as n from sqlite_stat4').get()).not.toEqual({ n: 0 });
      older.close();

      database = openSqlite(path, 'NORMAL');
      const { db, caps } = database;
      const samples = async () => Number((await sql<{ n: number }>`select count(*) as n from sqlite_stat4`.execute(db)).rows[0]!.n);
      const counts = async () => (await sql<{ idx: string; stat: string }>`select idx, stat from sqlite_stat1 order by idx`.execute(db)).rows;
      expect(await samples()).toBe(0);
      expect(await counts()).toEqual([{ idx: 't_status', stat: '2000 1000' }]);

      await sql`create index t_id_status on t (id, status)`.execute(db);
      for (const statement of caps.query.analyzeIndex('t_id_status')) await sql.raw(statement).execute(db);
      expect(await samples()).toBe(0);
      expect((await counts()).map((r) => r.idx)).toEqual(['t_id_status', 't_status']);

      await sql`with recursive n (i) as (select 1 union all select i + 1 from n where i < 30000) insert into t (status) select 'grown' from n`.execute(db);
      await sql`select count(*) from t where status = 'rare'`.execute(db);
      for (const statement of caps.query.refreshStatistics) await sql.raw(statement).execute(db);
      expect(await samples()).toBe(0);
      // pragma optimize analyzed the grown table again: its counts are the new ones.
      expect((await counts()).find((r) => r.idx === 't_status')!.stat.split(' ')[0]).not.toBe('2000');
    });
  });
});
