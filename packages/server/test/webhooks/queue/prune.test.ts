import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertAttempt } from '../../../src/webhooks/queue/attempts-store.js';
import { countPrunable } from '../../../src/webhooks/queue/jobs-store.js';
import { prune } from '../../../src/webhooks/queue/prune.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, failedAttempt, okAttempt, queueContext, seedJob, snapshot } from '../../helpers/queue-fixtures.js';

/** delivered → [*] and dead → [*]: retention removes finished jobs, with their attempts, in bounded batches. */
describe.each(DIALECTS)('prune (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  /** A job of `state` that reached it at `at`, with `attempts` attempt rows. */
  const finished = async (id: string, state: 'delivered' | 'dead' | 'pending', at: number, attempts = 2) => {
    const { db } = t.ctx.database;
    await seedJob(db, { id, webhookId: 'wh_a', state, attemptCount: attempts });
    await db.updateTable('delivery_jobs').set({ updated_at: at }).where('id', '=', id).execute();
    for (let n = 1; n <= attempts; n++) await insertAttempt(db, { id, webhookId: 'wh_a' }, n, n === attempts && state === 'delivered' ? okAttempt() : failedAttempt());
  };

  it('removes only jobs of the state that reached it before the cutoff, with their attempts, oldest first, at most `limit` a call', async () => {
    const { db, caps } = t.ctx.database;
    await finished('job_d1', 'delivered', T0 + 1);
    await finished('job_d2', 'delivered', T0 + 2);
    await finished('job_d3', 'delivered', T0 + 3);
    await finished('job_new', 'delivered', NOW);
    await finished('job_dead', 'dead', T0);
    await finished('job_pending', 'pending', T0, 1);

    expect(await countPrunable(db, { state: 'delivered', before: NOW })).toEqual({ jobs: 3, attempts: 6 });
    expect(await prune(db, caps, { state: 'delivered', before: NOW, limit: 2 })).toEqual({ jobs: 2, attempts: 4 });
    expect((await snapshot(db)).jobs.map((j) => j.id)).toEqual(['job_d3', 'job_dead', 'job_new', 'job_pending']);
    expect(await prune(db, caps, { state: 'delivered', before: NOW, limit: 2 })).toEqual({ jobs: 1, attempts: 2 });
    expect(await prune(db, caps, { state: 'delivered', before: NOW, limit: 2 })).toEqual({ jobs: 0, attempts: 0 });

    expect(await prune(db, caps, { state: 'dead', before: T0, limit: 10 })).toEqual({ jobs: 0, attempts: 0 });
    expect(await prune(db, caps, { state: 'dead', before: T0 + 1, limit: 10 })).toEqual({ jobs: 1, attempts: 2 });
    const left = await snapshot(db);
    expect(left.jobs.map((j) => j.id)).toEqual(['job_new', 'job_pending']);
    expect([...new Set(left.attempts.map((a) => a.job_id))].sort()).toEqual(['job_new', 'job_pending']);
  });
});
