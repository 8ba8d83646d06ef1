import { describe, expect, it } from 'vitest';
import { CLAIM_MAX_BYTES } from '../../src/webhooks/queue/claim.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { HOLD_MAX_BYTES, Scheduler } from '../../src/webhooks/worker/scheduler.js';
import { Slots, type Held } from '../../src/webhooks/worker/slots.js';

const MB = 1024 * 1024;
const target = (id: string): TargetRow => ({
  id, name: id, url: `https://${id}.example/`, topics: ['record.created'], enabled: true, disabledReason: null, disabledAt: null,
  secretSealed: 'x', previousSecretSealed: null, previousSecretExpiresAt: null, createdAt: 0, updatedAt: 0,
  collections: null, filter: null, changedFields: null, ordering: 'none',
});
const bigJobs = (webhookId: string, n: number, bytes = 2 * MB): Held[] =>
  Array.from({ length: n }, (_, i) => ({ job: { id: `${webhookId}_${i}`, webhookId, lease: 'l', leaseExpiresAt: 0, attemptCount: 0, roundStart: 0, body: Buffer.alloc(bytes) } }));

/** SPEC §12: the jobs a worker holds are budgeted in bytes (scheduler.ts HOLD_MAX_BYTES, claim.ts CLAIM_MAX_BYTES). */
describe('the worker\'s byte budget', () => {
  const perProcess = 64;
  const perTarget = 64;

  it('Slots counts the bodies it holds, running or waiting, until their attempts end or they are drained', () => {
    const slots = new Slots(perProcess, 2);
    slots.hold(bigJobs('a', 3, 1000));
    expect(slots.heldBytes).toBe(3000);
    const running = slots.takeReady();
    expect(running).toHaveLength(2);
    expect(slots.heldBytes).toBe(3000);
    slots.free(running[0]!.job);
    expect(slots.heldBytes).toBe(2000);
    expect(slots.drain()).toHaveLength(1);
    expect(slots.heldBytes).toBe(1000);
  });

  it('claims share at most CLAIM_MAX_BYTES, and nothing more is claimed or handed over once HOLD_MAX_BYTES is held', () => {
    const s = new Scheduler({ perProcess, perTarget });
    s.setTargets([target('a'), target('b')]);
    const slots = new Slots(perProcess, perTarget);
    const first = s.plan(slots)!;
    expect(first.map((w) => w.maxBytes)).toEqual([CLAIM_MAX_BYTES / 2, CLAIM_MAX_BYTES / 2]);
    // Claims of ~2 MB jobs under that budget, until less room than a claim's budget is left.
    slots.hold(bigJobs('a', 15));
    slots.hold(bigJobs('b', 15));
    expect(s.hasRoom('a', slots)).toBe(true);
    // Then the claim asks for what is left, shared.
    const next = s.plan(slots)!;
    expect(next.map((w) => w.maxBytes)).toEqual([(HOLD_MAX_BYTES - 60 * MB) / 2, (HOLD_MAX_BYTES - 60 * MB) / 2]);
    expect(HOLD_MAX_BYTES - 60 * MB).toBeLessThan(CLAIM_MAX_BYTES);
    slots.hold(bigJobs('a', 2));
    expect(slots.heldBytes).toBe(HOLD_MAX_BYTES);
    // Full: no claim, no hand-off, although both targets hold far fewer jobs than their hold of 128.
    expect(slots.busy('a') + slots.busy('b')).toBe(32);
    expect(s.plan(slots)).toBeNull();
    expect(s.hasRoom('b', slots)).toBe(false);
    // An attempt ends: room again.
    slots.free(slots.takeReady()[0]!.job);
    expect(s.plan(slots)).not.toBeNull();
    expect(s.hasRoom('b', slots)).toBe(true);
  });
});
