import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite, WITHOUT_SAMPLES } from '../../src/db/dialects/sqlite.js';
import type { Database } from '../../src/db/connect.js';
import type { Tables } from '../../src/db/tables.js';
import { BEFORE_ALL, readFeed, readFeedPage, readFeedPositions, type FeedFilter } from '../../src/events/feed-store.js';
import { newId } from '../../src/lib/ids.js';
import { findCollection } from '../../src/records/collections-store.js';
import { checkFilter } from '../../src/records/query/check.js';
import { listMatching } from '../../src/records/query/records-query-store.js';
import { parseSort } from '../../src/records/query/sort.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { seedFeedEvents } from '../helpers/feed-seed.js';
import { StatementLog } from '../helpers/statement-log.js';

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

/**
 * SQLite (3.53) marks a statement whose LIMIT is a bare parameter to be planned again whenever that parameter is
 * bound, and better-sqlite3 binds every parameter on every run: W11's filtered page and the feed's pages were parsed
 * and planned anew on every run. The mark is seen by binding integers as SQLite INTEGERs (BigInts; svc's numbers go as
 * REALs, whose value the planner never reads for a LIMIT): a statement so marked is planned again with the values
 * bound, and `EXPLAIN` lists another program (`Integer 51` into the limit's register, against `Variable` and
 * `MustBeInt` for a NULL). A statement planned once lists the same program whatever is bound.
 */
describe('SQLite plans a filtered page and a feed page once, not on every run', () => {
  let t: TestApp | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  /** The program SQLite runs for the statement with these values bound, integers as INTEGERs. */
  const program = async (db: Kysely<Tables>, text: string, parameters: readonly unknown[]) => {
    const values = parameters.map((v) => (typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v));
    return JSON.stringify((await db.executeQuery(CompiledQuery.raw(`explain ${text}`, values))).rows);
  };

  /** Each statement `read` ran, as compiled. */
  async function statementsOf(db: Kysely<Tables>, read: (db: Kysely<Tables>) => Promise<unknown>): Promise<CompiledQuery[]> {
    const log = new StatementLog();
    const logged = db.withPlugin(log);
    await read(logged);
    const executor = logged.getExecutor();
    return log.nodes.map((node, i) => executor.compileQuery(node, { queryId: `q${i}` }));
  }

  it('runs no statement of theirs whose program depends on the values bound', async () => {
    t = await createTestApp('sqlite', { SVC_SQLITE_READERS: '0' });
    const { db, caps } = t.ctx.database;
    const fields = [{ name: 'status', type: 'text', indexed: true }, { name: 'priority', type: 'integer', indexed: true }];
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/collections', headers: t.admin.headers, payload: { name: 'issues', fields } })).statusCode).toBe(201);
    const now = Date.now();
    const statuses = ['open', 'closed', 'waiting', 'done'];
    const records = Array.from({ length: 2000 }, (_, i) => ({
      id: newId('rec', now + i),
      collection: 'issues',
      version: 1,
      data: JSON.stringify({ status: statuses[i % 4], priority: Math.floor(i / 4) % 6 }),
      created_at: now + i,
      updated_at: now + i,
    }));
    for (let from = 0; from < records.length; from += 200) await db.insertInto('records').values(records.slice(from, from + 200)).execute();
    for (const statement of ['analyze', ...WITHOUT_SAMPLES]) await sql.raw(statement).execute(db);
    await seedFeedEvents(db, 'sqlite', { count: 300, collection: 'busy', first: 1, step: 2 });
    await seedFeedEvents(db, 'sqlite', { count: 300, collection: 'quiet', first: 2, step: 2 });

    // The premise: a bare LIMIT parameter is planned with its value, and an expression is not.
    const bare = "select id from records where collection = 'issues' order by id limit ?";
    expect(await program(db, bare, [51])).not.toBe(await program(db, bare, [null]));
    const expression = "select id from records where collection = 'issues' order by id limit (? + 0)";
    expect(await program(db, expression, [51])).toBe(await program(db, expression, [null]));

    // W11's page, its first and a later one; the feed's pages: W9's (every event), one collection's, two's (the sorted
    // positions joined to their events); a stream's read; the long-polls' shared look.
    const c = (await findCollection(db, 'issues'))!;
    const checked = checkFilter("status = 'open' && priority >= 3", c.fields);
    if (!('filter' in checked)) throw new Error('filter refused');
    const query = { collection: 'issues', filter: checked.filter, sort: parseSort('-priority', c.fields), after: null };
    const statements = await statementsOf(db, async (logged) => {
      expect(await listMatching(logged, caps.query, query, 51, 1 << 20)).toHaveLength(51);
      expect(await listMatching(logged, caps.query, { ...query, after: { values: [4], id: records[1000]!.id, loose: null } }, 51, 1 << 20)).toHaveLength(51);
    });
    for (const collections of [null, ['quiet'], ['busy', 'quiet']]) {
      const filter: FeedFilter = { collections, topics: null };
      statements.push(
        ...(await statementsOf(db, async (logged) => {
          expect((await readFeedPage(logged, caps, { after: BEFORE_ALL, filter, limit: 100, budget: 1 << 24 })).kept).toBe(100);
          expect((await readFeed(logged, caps, { after: null, filter, limit: 100, budget: 1 << 24 })).rows).toHaveLength(100);
        })),
      );
    }
    statements.push(...(await statementsOf(db, async (logged) => expect((await readFeedPositions(logged, caps, { after: BEFORE_ALL, limit: 1000 })).rows).toHaveLength(600))));
    const bound = statements.filter((s) => s.parameters.length > 0);
    expect(bound.length).toBeGreaterThanOrEqual(9);
    for (const s of bound) expect(await program(db, s.sql, s.parameters), s.sql).toBe(await program(db, s.sql, s.parameters.map(() => null)));
  }, 60_000);
});
