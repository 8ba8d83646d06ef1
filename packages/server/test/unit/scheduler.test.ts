import { describe, expect, it } from 'vitest';
import { CLAIM_MAX_BYTES } from '../../src/webhooks/queue/claim.js';
import type { HeldJob } from '../../src/webhooks/queue/job.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { HOLD_ROUNDS, Scheduler } from '../../src/webhooks/worker/scheduler.js';
import { Slots, type Held } from '../../src/webhooks/worker/slots.js';

const target = (id: string): TargetRow => ({
  id, name: id, url: `https://${id}.example/`, topics: ['record.created'], enabled: true, disabledReason: null, disabledAt: null,
  secretSealed: 'x', previousSecretSealed: null, previousSecretExpiresAt: null, createdAt: 0, updatedAt: 0,
  collections: null, filter: null, changedFields: null, ordering: 'none',
});
const jobs = (webhookId: string, n: number): Held[] =>
  Array.from({ length: n }, (_, i): Held => ({ job: { id: `${webhookId}_${i}`, webhookId, lease: 'l', leaseExpiresAt: 0, attemptCount: 0, roundStart: 0, body: Buffer.alloc(0) } satisfies HeldJob }));

/** When a worker claims, and how much (scheduler.ts): a fast receiver's backlog in large claims, never hoarded. */
describe('Scheduler.plan', () => {
  const perProcess = 64;
  const perTarget = 8;

  it('one fast target: claims up to its hold at once, and again only once it is down to half', () => {
    const s = new Scheduler({ perProcess, perTarget });
    s.setTargets([target('a')]);
    s.observe('a', 1); // 1 ms an attempt: 8 slots × 200 ms ÷ 1 ms = 1 600 wanted, capped at 1 024 a target
    const slots = new Slots(perProcess, perTarget);
    expect(s.plan(slots)).toEqual([{ webhookId: 'a', limit: 1024, maxBytes: CLAIM_MAX_BYTES }]);
    slots.hold(jobs('a', 1024));
    for (let i = 0; i < 60; i++) for (const h of slots.takeReady('a')) slots.free(h.job);
    // 544 left: more than half, no claim yet; at half, the half that was delivered.
    expect(slots.busy('a')).toBe(1024 - 60 * perTarget);
    expect(s.plan(slots)).toBeNull();
    while (slots.busy('a') > 512) for (const h of slots.takeReady('a')) slots.free(h.job);
    expect(s.plan(slots)).toEqual([{ webhookId: 'a', limit: 1024 - slots.busy('a'), maxBytes: CLAIM_MAX_BYTES }]);
  });

  it('ten fast targets: each holds at most its share of the process\'s hold, so claims stay large instead of a few jobs each time slots free', () => {
    const s = new Scheduler({ perProcess, perTarget });
    const ids = Array.from({ length: 10 }, (_, i) => `t${i}`);
    s.setTargets(ids.map(target));
    for (const id of ids) s.observe(id, 1);
    const slots = new Slots(perProcess, perTarget);
    const share = Math.floor((HOLD_ROUNDS * perProcess) / ids.length);
    const first = s.plan(slots)!;
    expect(first.map((w) => w.limit)).toEqual(ids.map(() => share));
    for (const id of ids) slots.hold(jobs(id, share));
    // One round of attempts done (64, spread over the targets): each still holds well over half its share, so no claim
    // of a few jobs yet (with holds of 512 a target, every target counted as low and each freed round made a claim).
    for (const h of slots.takeReady()) slots.free(h.job);
    expect(slots.inFlight).toBe(ids.length * share - perProcess);
    expect(s.plan(slots)).toBeNull();
    // Once one target is down to half its share, it is topped up (and any other a quarter short), and only those.
    while (slots.busy('t0') > share / 2) for (const h of slots.takeReady('t0')) slots.free(h.job);
    const next = s.plan(slots)!;
    expect(next.find((w) => w.webhookId === 't0')!.limit).toBe(share - slots.busy('t0'));
    expect(next.every((w) => w.limit >= share / 4)).toBe(true);
  });
  it('a wake-up that names targets has only those probed again; one that names a target not read asks for a refresh', () => {
    const s = new Scheduler({ perProcess, perTarget });
    const ids = Array.from({ length: 500 }, (_, i) => `t${i}`);
    s.setTargets(ids.map(target));
    const slots = new Slots(perProcess, perTarget);
    const all = s.plan(slots)!;
    expect(all).toHaveLength(500);
    // Nothing due anywhere: every target is idle, and no claim is planned until something changes.
    s.claimed(all, all.map(() => ({ jobs: [], spentUntil: null })));
    expect(s.plan(slots)).toBeNull();
    expect(s.wake(['t7', 't300'])).toBe(true);
    expect(s.plan(slots)!.map((w) => w.webhookId)).toEqual(['t7', 't300']);
    expect(s.wake(['t9', 'new'])).toBe(false);
    // The known one is probed again all the same.
    expect(s.plan(slots)!.map((w) => w.webhookId)).toEqual(['t7', 't9', 't300']);
  });

  it('more busy targets than the process holds jobs: whole-number limits of at least one, and every target reached in turn', () => {
    // 1,100 and 10,000 targets each with a backlog: the share of HOLD_ROUNDS × perProcess is below one job a target.
    for (const count of [1_100, 10_000]) {
      const s = new Scheduler({ perProcess, perTarget });
      const ids = Array.from({ length: count }, (_, i) => `t${i}`);
      s.setTargets(ids.map(target));
      const slots = new Slots(perProcess, perTarget);
      const reached = new Set<string>();
      for (let claim = 0; reached.size < count; claim++) {
        expect(claim).toBeLessThan(Math.ceil(count / (HOLD_ROUNDS * perProcess)) + 1);
        const wants = s.plan(slots)!;
        expect(wants.length).toBeGreaterThan(0);
        for (const w of wants) {
          expect(Number.isInteger(w.limit)).toBe(true);
          expect(w.limit).toBeGreaterThanOrEqual(1);
          reached.add(w.webhookId);
        }
        expect(wants.reduce((sum, w) => sum + w.limit, 0)).toBeLessThanOrEqual(HOLD_ROUNDS * perProcess);
        // Each claim's jobs are held, delivered and done before the next plan.
        for (const w of wants) slots.hold(jobs(w.webhookId, w.limit));
        while (slots.inFlight > 0) for (const h of slots.takeReady()) slots.free(h.job);
      }
      expect(reached.size).toBe(count);
    }
  });
});
