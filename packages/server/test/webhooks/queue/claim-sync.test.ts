import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim } from '../../../src/webhooks/queue/claim.js';
import type { TestContext } from '../../helpers/context.js';
import { NOW, queueContext, seedJob } from '../../helpers/queue-fixtures.js';

/**
 * SQLite: a claim's own transaction commits without a sync (sqlite/jobs.ts unsyncedTransaction), and only it: the
 * connection's setting (FULL by default) is back before anything else runs on it, whether the claim succeeded or not.
 * What a trigger reads of `pragma_synchronous` inside a statement is the level that statement's commit will have.
 */
describe('a SQLite claim commits unsynced, and nothing else does', () => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext('sqlite');
    const { db } = t.ctx.database;
    await sql`create table sync_seen (at text not null, level integer not null)`.execute(db);
    await sql`create trigger claim_sync after update of state on delivery_jobs begin
      insert into sync_seen select new.state, synchronous from pragma_synchronous; end`.execute(db);
  });
  afterEach(async () => t.close());

  const level = async () => (await sql<{ synchronous: number }>`pragma synchronous`.execute(t.ctx.database.db)).rows[0]!.synchronous;
  const seen = async () => (await sql<{ at: string; level: number }>`select at, level from sync_seen`.execute(t.ctx.database.db)).rows;
  const claimAll = () => claim(t.ctx.database.db, t.ctx.database.caps, { now: NOW, leaseMs: 30_000, targets: [{ webhookId: 'wh_a', limit: 10 }] });

  it('the claim runs at NORMAL; the connection is at FULL before and after it, and a plain write after it is FULL', async () => {
    const { db } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a' });
    await seedJob(db, { id: 'job_2', webhookId: 'wh_a' });
    expect(await level()).toBe(2);
    const [jobs] = await claimAll();
    expect(jobs!.map((j) => j.id).sort()).toEqual(['job_1', 'job_2']);
    // One row per job the claim's update moved, each seen at NORMAL (1).
    expect(await seen()).toEqual([
      { at: 'delivering', level: 1 },
      { at: 'delivering', level: 1 },
    ]);
    expect(await level()).toBe(2);
    await sql`update delivery_jobs set state = 'pending' where id = 'job_1'`.execute(db);
    expect((await seen()).at(-1)).toEqual({ at: 'pending', level: 2 });
  });

  it('a claim that fails leaves the connection at FULL, and claims again once the fault is gone', async () => {
    const { db } = t.ctx.database;
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a' });
    await sql`create trigger claim_fails before update of state on delivery_jobs begin select raise(abort, 'refused by the test'); end`.execute(db);
    await expect(claimAll()).rejects.toThrow(/refused by the test/);
    expect(await level()).toBe(2);
    expect(await seen()).toEqual([]);
    await sql`drop trigger claim_fails`.execute(db);
    const [jobs] = await claimAll();
    expect(jobs!.map((j) => j.id)).toEqual(['job_1']);
    expect(await level()).toBe(2);
  });

  it('a connection opened at NORMAL (SVC_SQLITE_SYNCHRONOUS) stays at NORMAL', async () => {
    const { db } = t.ctx.database;
    await sql`pragma synchronous = normal`.execute(db);
    await seedJob(db, { id: 'job_1', webhookId: 'wh_a' });
    await claimAll();
    expect(await seen()).toEqual([{ at: 'delivering', level: 1 }]);
    expect(await level()).toBe(1);
  });
});
