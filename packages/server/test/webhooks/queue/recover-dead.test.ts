import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';
import { deadScanEnd } from '../../../src/webhooks/queue/jobs-store.js';
import { recoverDead } from '../../../src/webhooks/queue/recover-dead.js';
import type { TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, jobRow, queueContext, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

const FIRST_DELAY_MS = 5_000;
const MIN = 60_000;

/** dead → pending for a target's dead jobs created within a window, a bounded batch per call. */
describe.each(DIALECTS)('recoverDead (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  /** A job created at `at`, with the time-ordered id a real job created then would have. */
  async function deadJobAt(at: number, webhookId = 'wh_a', state: 'dead' | 'pending' | 'delivered' = 'dead') {
    const id = newId('del', at);
    const row = await seedJob(t.ctx.database.db, { id, webhookId, state, attemptCount: 8, roundStart: 0, lastError: { code: 'http_status', message: 'The receiver answered 500.' } });
    await sql`update delivery_jobs set created_at = ${at} where id = ${id}`.execute(t.ctx.database.db);
    return { ...row, created_at: at };
  }
  const recover = (from: number, to: number, limit = 500, webhookId = 'wh_a') =>
    recoverDead(t.ctx.database.db, t.ctx.database.caps, { now: NOW, webhookId, from, to, firstDelayMs: FIRST_DELAY_MS, limit });

  it("sends the target's dead jobs created in the window back to pending for a new round, as a retry does; nothing else moves", async () => {
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_b');
    const before = await deadJobAt(T0 - 10 * MIN);
    const inside = await deadJobAt(T0 - 5 * MIN);
    const edge = await deadJobAt(T0);
    await deadJobAt(T0 - 5 * MIN, 'wh_b');
    await deadJobAt(T0 - 5 * MIN, 'wh_a', 'delivered');
    await deadJobAt(T0 - 5 * MIN, 'wh_a', 'pending');
    const untouched = await snapshot(db);

    expect(await recover(T0 - 6 * MIN, T0)).toBe(2);
    for (const job of [inside, edge]) {
      expect(await jobRow(db, job.id)).toEqual({ ...job, state: 'pending', round_start: 8, next_attempt_at: NOW + FIRST_DELAY_MS, updated_at: NOW });
    }
    const after = await snapshot(db);
    const moved = new Set([inside.id, edge.id]);
    expect(after.jobs.filter((j) => !moved.has(j.id))).toEqual(untouched.jobs.filter((j) => !moved.has(j.id)));
    expect(await jobRow(db, before.id)).toEqual(before);
    // A second call finds nothing left to recover in the window.
    expect(await recover(T0 - 6 * MIN, T0)).toBe(0);
  });

  it('moves at most `limit` jobs per call, oldest first; repeated calls take the rest', async () => {
    const jobs = [];
    for (let i = 0; i < 5; i++) jobs.push(await deadJobAt(T0 - (5 - i) * MIN));
    expect(await recover(T0 - 10 * MIN, T0, 2)).toBe(2);
    expect((await jobRow(t.ctx.database.db, jobs[0]!.id))!.state).toBe('pending');
    expect((await jobRow(t.ctx.database.db, jobs[2]!.id))!.state).toBe('dead');
    expect(await recover(T0 - 10 * MIN, T0, 2)).toBe(2);
    expect(await recover(T0 - 10 * MIN, T0, 2)).toBe(1);
    expect(await recover(T0 - 10 * MIN, T0, 2)).toBe(0);
  });

  it("within a slice of the dead jobs' index (afterId, throughId] only: other targets' dead jobs bound the walk, not the batch", async () => {
    const { db, caps } = t.ctx.database;
    await seedTarget(db, 'wh_b');
    // Dead jobs of both targets, interleaved in creation order: a, b, b, a, b, b, a, …
    const jobs = [];
    for (let i = 0; i < 9; i++) jobs.push(await deadJobAt(T0 - (9 - i) * MIN, i % 3 === 0 ? 'wh_a' : 'wh_b'));
    const window = { from: T0 - 10 * MIN, to: T0 };
    // The fourth dead job from the window's start, then the fourth after it; fewer than four left: null.
    const first = await deadScanEnd(db, { from: window.from, afterId: null }, 4);
    expect(first).toBe(jobs[3]!.id);
    const second = await deadScanEnd(db, { from: window.from, afterId: first }, 4);
    expect(second).toBe(jobs[7]!.id);
    expect(await deadScanEnd(db, { from: window.from, afterId: second }, 4)).toBeNull();
    const slice = (afterId: string | null, throughId: string | null) =>
      recoverDead(db, caps, { now: NOW, webhookId: 'wh_a', ...window, firstDelayMs: FIRST_DELAY_MS, limit: 500, afterId, throughId });
    // (start, jobs[3]]: jobs[0] and jobs[3] are wh_a's.
    expect(await slice(null, first)).toBe(2);
    expect((await jobRow(db, jobs[6]!.id))!.state).toBe('dead');
    expect(await slice(first, second)).toBe(1);
    expect(await slice(second, null)).toBe(0);
    expect((await db.selectFrom('delivery_jobs').select('id').where('state', '=', 'pending').orderBy('id').execute()).map((r) => r.id)).toEqual([jobs[0]!.id, jobs[3]!.id, jobs[6]!.id]);
  });

  it('changes nothing for a deleted target', async () => {
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_gone', { enabled: false, deletedAt: T0 + 1 });
    await deadJobAt(T0 - MIN, 'wh_gone');
    const before = await snapshot(db);
    expect(await recover(T0 - 10 * MIN, T0, 500, 'wh_gone')).toBe(0);
    expect(await snapshot(db)).toEqual(before);
  });

  it('for a target that orders by record: the recovered jobs come back held, and only the oldest of each record goes', async () => {
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_o', { ordering: 'record' });
    const first = await deadJobAt(T0 - 3 * MIN, 'wh_o');
    const second = await deadJobAt(T0 - 2 * MIN, 'wh_o');
    expect(await recover(T0 - 10 * MIN, T0, 500, 'wh_o')).toBe(2);
    // Both are rec_1's (the fixture's record): the older goes out, the newer waits for it.
    expect(await jobRow(db, first.id)).toMatchObject({ state: 'pending', round_start: 8, next_attempt_at: NOW });
    expect(await jobRow(db, second.id)).toMatchObject({ state: 'held', round_start: 8 });
  });
});
