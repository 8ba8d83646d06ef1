import { describe, expect, it } from 'vitest';
import type { Claimed } from '../../src/webhooks/queue/claim.js';
import type { HeldJob } from '../../src/webhooks/queue/job.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { Scheduler } from '../../src/webhooks/worker/scheduler.js';
import { Slots, type Held } from '../../src/webhooks/worker/slots.js';

const target = (id: string, ratePerSecond: number | null = null): TargetRow => ({
  id, name: id, url: `https://${id}.example/`, topics: ['record.created'], enabled: true, disabledReason: null, disabledAt: null,
  secretSealed: 'x', previousSecretSealed: null, previousSecretExpiresAt: null, createdAt: 0, updatedAt: 0,
  collections: null, filter: null, changedFields: null, ordering: 'none',
  signatureScheme: 'svc', signatureAlgorithm: 'hmac-sha256', publicKey: null, headersSealed: null, headersShown: null, ratePerSecond,
});
const jobs = (webhookId: string, n: number): Held[] =>
  Array.from({ length: n }, (_, i): Held => ({ job: { id: `${webhookId}_${i}`, webhookId, lease: 'l', leaseExpiresAt: 0, attemptCount: 0, roundStart: 0, body: Buffer.alloc(0) } satisfies HeldJob }));
const got = (n: number, spentUntil: number | null = null): Claimed => ({ jobs: jobs('x', n).map((h) => h.job), spentUntil });

/** scheduler.ts for rate-limited targets (SPEC §13 `rateLimit`): claim what can start now, and nothing while the second is spent. */
describe('Scheduler with a rate-limited target', () => {
  const perProcess = 64;
  const perTarget = 8;
  const T = 1_700_000_000_000; // the start of a second

  it('asks for its free slots only (not above its rate), marked limited, beside an unlimited target planned as before', () => {
    const s = new Scheduler({ perProcess, perTarget });
    s.setTargets([target('free'), target('lim', 20)]);
    s.observe('free', 1);
    s.observe('lim', 1); // a fast receiver: an unlimited target would be given 1 024
    const slots = new Slots(perProcess, perTarget);
    const plan = s.plan(slots, T)!;
    expect(plan.find((w) => w.webhookId === 'lim')).toEqual({ webhookId: 'lim', limit: perTarget, limited: true, maxBytes: expect.any(Number) });
    expect(plan.find((w) => w.webhookId === 'free')!.limited).toBeUndefined();
    expect(plan.find((w) => w.webhookId === 'free')!.limit).toBeGreaterThan(perTarget);

    const slow = new Scheduler({ perProcess, perTarget });
    slow.setTargets([target('lim', 3)]);
    expect(slow.plan(new Slots(perProcess, perTarget), T)).toEqual([expect.objectContaining({ webhookId: 'lim', limit: 3 })]);
  });

  it('claims again once half its slots are free, not for every slot freed', () => {
    const s = new Scheduler({ perProcess, perTarget });
    s.setTargets([target('lim', 100)]);
    const slots = new Slots(perProcess, perTarget);
    slots.hold(jobs('lim', perTarget));
    const running = slots.takeReady();
    expect(s.plan(slots, T)).toBeNull();
    for (const h of running.slice(0, perTarget / 2 - 1)) slots.free(h.job);
    expect(s.plan(slots, T)).toBeNull();
    slots.free(running[perTarget / 2 - 1]!.job);
    expect(s.plan(slots, T)).toEqual([expect.objectContaining({ webhookId: 'lim', limit: perTarget / 2, limited: true })]);
  });

  it('a spent second: left out of plans until the next second, through wake-ups (setTargets) too, while others are claimed', () => {
    const s = new Scheduler({ perProcess, perTarget });
    s.setTargets([target('free'), target('lim', 5)]);
    const slots = new Slots(perProcess, perTarget);
    const plan = s.plan(slots, T)!;
    s.claimed(plan, plan.map((w) => (w.webhookId === 'lim' ? got(5, T + 1000) : got(10))));
    expect(s.nextAllowanceAt(T + 10)).toBe(T + 1000);
    // A wake-up re-reads the targets: still spent, so no claim for it; the unlimited target is still planned.
    s.setTargets([target('free'), target('lim', 5)]);
    expect(s.plan(slots, T + 999)!.map((w) => w.webhookId)).toEqual(['free']);
    expect(s.plan(slots, T + 1000)!.map((w) => w.webhookId).sort()).toEqual(['free', 'lim']); // in any order: plans take turns (scheduler.ts nextStart)
    expect(s.nextAllowanceAt(T + 1000)).toBeNull();
  });

  it('nothing due (allowance left): idle until the next wake-up, like any target, with no timer', () => {
    const s = new Scheduler({ perProcess, perTarget });
    s.setTargets([target('lim', 5)]);
    const slots = new Slots(perProcess, perTarget);
    s.claimed(s.plan(slots, T)!, [got(0)]);
    expect(s.plan(slots, T)).toBeNull();
    expect(s.nextAllowanceAt(T)).toBeNull();
    s.setTargets([target('lim', 5)]);
    expect(s.plan(slots, T)).not.toBeNull();
  });

  it('is never handed a job: its jobs are claimed through the bucket', () => {
    const s = new Scheduler({ perProcess, perTarget });
    s.setTargets([target('free'), target('lim', 5)]);
    const slots = new Slots(perProcess, perTarget);
    expect(s.hasRoom('free', slots)).toBe(true);
    expect(s.hasRoom('lim', slots)).toBe(false);
    // The limit removed: handed over again.
    s.setTargets([target('free'), target('lim', null)]);
    expect(s.hasRoom('lim', slots)).toBe(true);
    expect([...s.limitedIds()]).toEqual([]);
  });
});
