import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { claim, CLAIM_MAX_BYTES, JOB_OVERHEAD_BYTES } from '../../src/webhooks/queue/claim.js';
import { claimStatement } from '../../src/db/dialects/postgres/jobs.js';
import { unfinishedProbes } from '../../src/webhooks/queue/enqueue.js';
import { listJobs, listJobsQuery, queueStats, queueStatsStatement } from '../../src/webhooks/queue/jobs-store.js';
import { rescue, rescueStatement } from '../../src/webhooks/queue/rescue.js';
import { claimStatementTexts, deliveredStatementText } from '../../src/db/dialects/sqlite/jobs.js';
import { DIALECTS } from '../helpers/db.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * The claim must cost the same with 20 000 jobs queued as with 20: its plan probes the claim index and then
 * the primary key, never a walk over every pending job (SQLite chose exactly that once, for an extra guard in
 * the outer WHERE: 470 deliveries/s on a 20 000-job backlog).
 */
describe.each(DIALECTS)('claim statement plan (%s)', (dialect) => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it('uses the claim index and the primary key, not a scan of the backlog, and claims oldest due first', async () => {
    t = await createTestContext(dialect);
    const { db, caps } = t.ctx.database;
    const now = Date.now();
    for (const id of ['wh_a', 'wh_b']) {
      await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
                values (${id}, ${id}, 'https://example.com/', '["*"]', 1, 'x', ${now}, ${now})`.execute(db);
    }
    // 3 000 due jobs per target, the oldest due last by id, so a plan that ignores next_attempt_at shows.
    await sql`insert into events (id, topic, collection, record_id, payload, created_at) values ('evt', 'record.created', 'c', 'rec', '{"n":1}', ${now})`.execute(db);
    await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count,
                round_start, next_attempt_at, created_at, updated_at)
              with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000)
              select 'job_' || w.id || '_' || (10000 + i), w.id, 'evt', 'record.created', 'c', 'rec', 'pending', 0, 0,
                     cast(${now} as bigint) - i, ${now}, ${now}
                from n cross join (select id from webhooks) w`.execute(db);
    if (dialect === 'postgres') await sql`analyze delivery_jobs`.execute(db);

    // Two targets in one claim: each probes its own range of the claim index.
    // Large limits, as a fast receiver's claims have (PostgreSQL once chose a sequential scan for the update past ~100).
    const targets = [
      { webhookId: 'wh_a', limit: 256, maxBytes: CLAIM_MAX_BYTES, limited: false },
      { webhookId: 'wh_b', limit: 200, maxBytes: CLAIM_MAX_BYTES, limited: false },
    ];
    const explain = dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
    const planOfText = async (text: string, parameters: readonly unknown[]): Promise<string> => {
      const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain + text, [...parameters]));
      return rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n');
    };
    if (dialect === 'sqlite') {
      // The pick, then the chosen jobs read and updated (sqlite/jobs.ts): every step an index probe, the target's
      // pending jobs by due time, then the primary key, at one id and at a full statement of 512.
      const pick = claimStatementTexts(targets, 456).pick.replace(/^\/\*[^*]*\*\/ /, '');
      const pickPlan = await planOfText(pick, targets.flatMap((t) => [t.webhookId, now, t.webhookId, t.limit]));
      expect(pickPlan).not.toMatch(/SCAN delivery_jobs/);
      expect(pickPlan.match(/delivery_jobs_pending \(webhook_id=\? AND next_attempt_at<\?\)/g)).toHaveLength(2);
      for (const ids of [1, 456]) {
        const { read, update, size } = claimStatementTexts(targets, ids);
        const byId = Array.from({ length: size }, (_, k) => `job_wh_a_${10001 + k}`);
        const readPlan = await planOfText(read.replace(/^\/\*[^*]*\*\/ /, ''), byId);
        const updatePlan = await planOfText(update, ['lease_x', now, now, ...byId]);
        for (const plan of [readPlan, updatePlan]) {
          expect(plan).not.toMatch(/SCAN delivery_jobs/);
          expect(plan).toMatch(/SEARCH (delivery_jobs|j) USING INDEX sqlite_autoindex_delivery_jobs_1 \(id=\?\)/);
        }
        expect(readPlan).toMatch(/SEARCH e USING INDEX sqlite_autoindex_events_1 \(id=\?\)/);
      }
    } else {
      const compiled = claimStatement({ lease: 'lease_x', now, leaseMs: 60_000, targets, overheadBytes: JOB_OVERHEAD_BYTES, withTrace: false }).compile(db);
      const plan = await planOfText(compiled.sql, compiled.parameters);
      expect(plan).not.toMatch(/Seq Scan on delivery_jobs/);
      // PostgreSQL may pick either due-order index for the subquery (its costs decide); the update is by key.
      expect(plan).toMatch(/Index Scan using delivery_jobs_pkey on delivery_jobs\s/);
      expect(plan).toMatch(/Index Cond: \(id = ANY/);
      expect(plan).toMatch(/LockRows/);
      expect(plan.match(/Index (Only )?Scan using delivery_jobs_pending(_due)? on delivery_jobs delivery_jobs_\d/g)).toHaveLength(2);
    }

    const [claimed = []] = await claim(db, caps, { now, leaseMs: 60_000, targets: [{ webhookId: 'wh_a', limit: 16 }] });
    expect(claimed.map((j) => j.id).sort()).toEqual(Array.from({ length: 16 }, (_, k) => `job_wh_a_${12985 + k}`));
    expect(claimed.every((j) => j.webhookId === 'wh_a' && j.lease === claimed[0]!.lease && j.lease.startsWith('lease_'))).toBe(true);
    // The body comes back whole: the job's own fields and its event's payload, in the seed's order.
    expect(claimed[0]!.body.toString()).toBe(`{"version":"1","id":"${claimed[0]!.id}","topic":"record.created","collection":"c","recordId":"rec","payload":{"n":1}}`);
    const states = await db.selectFrom('delivery_jobs').select(['webhook_id', 'state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy(['webhook_id', 'state']).orderBy('webhook_id').orderBy('state').execute();
    expect(states.map((s) => [s.webhook_id, s.state, Number(s.n)])).toEqual([
      ['wh_a', 'delivering', 16],
      ['wh_a', 'pending', 2984],
      ['wh_b', 'pending', 3000],
    ]);

    // Several targets in one transaction: each gets its own oldest due jobs, in the order asked.
    const [forB, forA] = await claim(db, caps, {
      now,
      leaseMs: 60_000,
      targets: [
        { webhookId: 'wh_b', limit: 3 },
        { webhookId: 'wh_a', limit: 2 },
      ],
    });
    // One claim, one lease token for all its jobs, and not the first claim's.
    expect(new Set([...forB!, ...forA!].map((j) => j.lease)).size).toBe(1);
    expect(forA![0]!.lease).not.toBe(claimed[0]!.lease);
    expect(forB!.map((j) => j.id).sort()).toEqual(['job_wh_b_12998', 'job_wh_b_12999', 'job_wh_b_13000']);
    expect(forA!.map((j) => j.id).sort()).toEqual(['job_wh_a_12983', 'job_wh_a_12984']);

    // Delivered jobs leave the queue's indexes: the rescue and the queue gauges read only unfinished jobs.
    // As in a queue that has run for a while: most jobs delivered, a few pending, in flight and dead.
    await sql`update delivery_jobs set state = 'delivered' where webhook_id = 'wh_b' or (state = 'pending' and id < 'job_wh_a_12900')`.execute(db);
    await sql`update delivery_jobs set state = 'dead' where id in ('job_wh_b_10001', 'job_wh_b_10002')`.execute(db);
    if (dialect === 'postgres') await sql`analyze delivery_jobs`.execute(db);
    const planOf = async (q: { sql: string; parameters: readonly unknown[] }): Promise<string> => {
      const { rows: steps } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain + q.sql, [...q.parameters]));
      return steps.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n');
    };
    const rescuePlan = await planOf(rescueStatement(now).compile(db));
    const statsPlan = await planOf(queueStatsStatement(db, caps).compile());
    const deadPlan = await planOf(listJobsQuery(db, { state: 'dead' }, null, 50).compile());
    for (const text of [rescuePlan, statsPlan, deadPlan]) expect(text).not.toMatch(/Seq Scan on delivery_jobs|SCAN delivery_jobs(?! USING)/);
    if (dialect === 'sqlite') {
      expect(rescuePlan).toMatch(/delivery_jobs_leases/);
      expect(statsPlan).toMatch(/delivery_jobs_pending_due/);
      expect(statsPlan).toMatch(/delivery_jobs_leases|delivery_jobs_pending/);
      expect(deadPlan).toMatch(/delivery_jobs_dead/);
    } else {
      // PostgreSQL names the partial index it scans; with 18 delivering jobs among 6 000, nothing else is cheaper.
      expect(rescuePlan).toMatch(/Index (Only )?Scan using delivery_jobs_leases on delivery_jobs|Bitmap Index Scan on delivery_jobs_leases/);
      expect(statsPlan).toMatch(/delivery_jobs_pending(_due)?/);
      expect(statsPlan).toMatch(/delivery_jobs_leases/);
      expect(deadPlan).toMatch(/delivery_jobs_dead/);
    }
    expect(await queueStats(db, caps)).toMatchObject({ byState: { pending: 83, delivering: 18 } });
    expect((await listJobs(db, { state: 'dead' }, null, 50)).map((j) => j.id)).toEqual(['job_wh_b_10002', 'job_wh_b_10001']);
    expect(await rescue(db, { now })).toBe(0);
  });

  it('a write to an ordered target finds its record\'s unfinished jobs through the partial indexes, not the target\'s history', async () => {
    t = await createTestContext(dialect);
    const { db, caps } = t.ctx.database;
    const now = Date.now();
    await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at, ordering)
              values ('wh_o', 'wh_o', 'https://example.com/', '["*"]', 1, 'x', ${now}, ${now}, 'record')`.execute(db);
    await sql`insert into events (id, topic, collection, record_id, payload, created_at) values ('evt', 'record.updated', 'c', 'rec_hot', '{}', ${now})`.execute(db);
    // A long history: 3 000 delivered versions of one hot record and 3 000 of other records, then its open job.
    await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count,
                round_start, next_attempt_at, created_at, updated_at, ordered)
              with recursive n(i) as (select 1 union all select i + 1 from n where i < 6000)
              select 'job_' || (10000 + i), 'wh_o', 'evt', 'record.updated', 'c', case when i % 2 = 0 then 'rec_hot' else 'rec_' || i end,
                     'delivered', 1, 0, ${now}, ${now}, ${now}, 1
                from n`.execute(db);
    await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at, ordered)
              values ('job_20000', 'wh_o', 'evt', 'record.updated', 'c', 'rec_hot', 'pending', 0, 0, ${now}, ${now}, ${now}, 1)`.execute(db);
    if (dialect === 'postgres') await sql`analyze delivery_jobs`.execute(db);
    const probes = unfinishedProbes(caps, 'wh_o', 'rec_hot');
    const explain = dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
    const planOf = async (q: { sql: string; parameters: readonly unknown[] }): Promise<string> => {
      const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain + q.sql, [...q.parameters]));
      return rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n');
    };
    const heldPlan = await planOf(probes.held.compile(db));
    const openPlan = await planOf(probes.open.compile(db));
    for (const text of [heldPlan, openPlan]) expect(text).not.toMatch(/Seq Scan on delivery_jobs|SCAN delivery_jobs(?! USING)|delivery_jobs_webhook/);
    expect(heldPlan).toMatch(/delivery_jobs_held/);
    expect(openPlan).toMatch(/delivery_jobs_open_record/);
    expect((await probes.held.execute(db)).rows).toEqual([]);
    expect((await probes.open.execute(db)).rows).toEqual([{ id: 'job_20000', state: 'pending' }]);
  });
});

/** SQLite's completion (db/dialects/sqlite/jobs.ts): a row of parameters a job, each found by its primary key. */
describe('completion statement plan (sqlite)', () => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it.each([1, 64])('a statement of %i rows probes the primary key for each, never a scan of the jobs', async (rows) => {
    t = await createTestContext('sqlite');
    const { db } = t.ctx.database;
    const text = deliveredStatementText(rows);
    const parameters = Array.from({ length: rows * 11 + 1 }, () => null);
    const plan = (await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, parameters))).rows.map((r) => r.detail).join('\n');
    expect(plan).not.toMatch(/SCAN delivery_jobs/);
    expect(plan).toMatch(/SEARCH delivery_jobs USING INDEX sqlite_autoindex_delivery_jobs_1 \(id=\?\)/);
  });
});
