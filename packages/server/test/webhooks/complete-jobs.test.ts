import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { claimJobs } from '../../src/webhooks/queue/claim-jobs.js';
import { completeJobs } from '../../src/webhooks/queue/complete-job.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';

/** A batch of results is written as one unit (one statement on PostgreSQL), and a lost lease still changes nothing. */
describe.each(DIALECTS)('completeJobs (%s)', (dialect) => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it('completes only the jobs still under the lease, with their attempts recorded exactly', async () => {
    t = await createTestContext(dialect);
    const { db, caps } = t.ctx.database;
    const now = Date.now();
    await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
              values ('wh_a', 'a', 'https://example.com/', '["*"]', 1, 'x', ${now}, ${now})`.execute(db);
    await sql`insert into events (id, topic, collection, record_id, payload, created_at) values ('evt', 'record.created', 'c', 'rec', '{}', ${now})`.execute(db);
    for (const id of ['del_1', 'del_2', 'del_3']) {
      await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start,
                  next_attempt_at, created_at, updated_at)
                values (${id}, 'wh_a', 'evt', 'record.created', 'c', 'rec', 'pending', 2, 0, ${now - 1}, ${now}, ${now})`.execute(db);
    }
    const claimed = await claimJobs(db, caps, { leaseId: 'lease_mine', leaseMs: 60_000, limit: 3, webhookId: 'wh_a' });
    expect(claimed).toHaveLength(3);
    // del_3 was rescued and claimed by another worker meanwhile: its lease is no longer ours.
    await sql`update delivery_jobs set lease_id = 'lease_theirs' where id = 'del_3'`.execute(db);

    const snippet = 'ok "quoted" \\ back\\slash, ünïcødé ✓ 😀\n{"json":[1,2]}';
    const attempt = (statusCode: number | null, durationMs: number) => ({ startedAt: now, durationMs, statusCode, error: null, responseSnippet: snippet });
    const applied = await completeJobs(db, caps, 'lease_mine', [
      { jobId: 'del_1', attempt: attempt(200, 12.4) },
      { jobId: 'del_2', attempt: attempt(204, 7.6) },
      { jobId: 'del_3', attempt: attempt(200, 3) },
    ]);
    expect([...applied].sort()).toEqual(['del_1', 'del_2']);

    const jobs = await db.selectFrom('delivery_jobs').select(['id', 'state', 'attempt_count', 'lease_id']).orderBy('id').execute();
    expect(jobs).toEqual([
      { id: 'del_1', state: 'delivered', attempt_count: 3, lease_id: null },
      { id: 'del_2', state: 'delivered', attempt_count: 3, lease_id: null },
      { id: 'del_3', state: 'delivering', attempt_count: 2, lease_id: 'lease_theirs' },
    ]);
    const attempts = await db.selectFrom('delivery_attempts').selectAll().orderBy('job_id').execute();
    expect(attempts.map((a) => ({ ...a, started_at: Number(a.started_at) }))).toEqual([
      { job_id: 'del_1', number: 3, started_at: now, duration_ms: 12, status_code: 200, error_code: null, error_message: null, response_snippet: snippet },
      { job_id: 'del_2', number: 3, started_at: now, duration_ms: 8, status_code: 204, error_code: null, error_message: null, response_snippet: snippet },
    ]);
    expect(await completeJobs(db, caps, 'lease_mine', [])).toEqual(new Set());
  });
});
