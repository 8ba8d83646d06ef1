import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { putMetaAtLeast, getMeta, takeLease } from '../../src/db/meta-store.js';
import { prunedThroughText } from '../../src/events/retention-store.js';
import { registerRetentionMetrics } from '../../src/retention.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';

const T = 1_800_000_000_000;

/** One retention pass at a time across processes: the lease, and the horizon that only moves forward. */
describe.each(DIALECTS)('retention lease and horizon (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await createTestContext(dialect);
  });
  afterEach(async () => t.close());

  it('a lease is held by one owner until it expires; the holder renews it', async () => {
    const { db } = t.ctx.database;
    expect(await takeLease(db, 'k', 'A', T, 90_000)).toBe(true);
    expect(await takeLease(db, 'k', 'B', T + 1_000, 90_000)).toBe(false);
    expect(await takeLease(db, 'k', 'A', T + 60_000, 90_000)).toBe(true);
    // A's renewal runs to T + 150 s: B still waits at T + 149 s, and takes it after.
    expect(await takeLease(db, 'k', 'B', T + 149_000, 90_000)).toBe(false);
    expect(await takeLease(db, 'k', 'B', T + 150_001, 90_000)).toBe(true);
    expect(await takeLease(db, 'k', 'A', T + 150_002, 90_000)).toBe(false);
    // Of many processes racing for a free lease, exactly one wins.
    const wins = await Promise.all(['C', 'D', 'E', 'F'].map((o) => takeLease(db, 'free', o, T, 90_000)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('the pruned horizon never moves back, in feed order', async () => {
    const { db } = t.ctx.database;
    await putMetaAtLeast(db, 'h', prunedThroughText({ tx: 0, position: 9 }));
    await putMetaAtLeast(db, 'h', prunedThroughText({ tx: 0, position: 10 }));
    await putMetaAtLeast(db, 'h', prunedThroughText({ tx: 0, position: 2 }));
    expect(await getMeta(db, 'h')).toBe(prunedThroughText({ tx: 0, position: 10 }));
    await putMetaAtLeast(db, 'h', prunedThroughText({ tx: 7, position: 1 }));
    expect((await getMeta(db, 'h'))!.split('.').map(Number)).toEqual([7, 1]);
  });

  it('svc_pruned_rows_total counts per table', async () => {
    const registry = new Registry();
    const count = registerRetentionMetrics(registry);
    count({ delivery_jobs: 2, delivery_attempts: 5 });
    count({ events: 3, delivery_jobs: 1 });
    const text = await registry.metrics();
    expect(text).toContain('svc_pruned_rows_total{table="delivery_jobs"} 3');
    expect(text).toContain('svc_pruned_rows_total{table="delivery_attempts"} 5');
    expect(text).toContain('svc_pruned_rows_total{table="events"} 3');
  });
});
