import { afterEach, describe, expect, it } from 'vitest';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Tables } from '../../src/db/tables.js';
import { readFeedPage } from '../../src/events/feed-store.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * DialectCapabilities.keepPlan: on PostgreSQL a kept statement text runs as a named prepared statement, so each
 * connection plans it once; other statements stay unnamed. Prepared statements are per session: each check runs in
 * one transaction, which holds one connection.
 */
describe.runIf(DIALECTS.includes('postgres'))('kept plans (postgres)', () => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  const preparedOn = (trx: Kysely<Tables>) =>
    sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(trx).then((r) => r.rows);

  it('prepares a kept text once per connection and leaves other statements unnamed', async () => {
    t = await createTestContext('postgres');
    const { db, caps } = t.ctx.database;
    const kept = 'select $1::int + 1 as n';
    const other = 'select $1::int + 2 as n';
    caps.keepPlan(kept);
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < 3; i++) expect((await trx.executeQuery<{ n: number }>(CompiledQuery.raw(kept, [i]))).rows[0]!.n).toBe(i + 1);
      expect((await trx.executeQuery<{ n: number }>(CompiledQuery.raw(other, [1]))).rows[0]!.n).toBe(3);
      const prepared = await preparedOn(trx);
      expect(prepared.filter((p) => p.statement === kept)).toHaveLength(1);
      expect(prepared.some((p) => p.statement === other)).toBe(false);
    });
  });

  it('keeps the feed page statement\'s plan', async () => {
    t = await createTestContext('postgres');
    const { db, caps } = t.ctx.database;
    await db.transaction().execute(async (trx) => {
      const page = await readFeedPage(trx, caps, { after: { tx: -1, position: -1 }, filter: { collections: null, topics: null }, limit: 10, budget: 1 << 20 });
      expect(page.kept).toBe(0);
      const prepared = await preparedOn(trx);
      expect(prepared.some((p) => p.statement.includes('from events') && p.statement.includes('pg_stat_activity'))).toBe(true);
    });
  });
});
