import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { collectionDue, createIdleCollector, oldSpaceBytes } from '../../src/lib/idle-collection.js';

const rule = { idleUtilization: 0.05, growthBytes: 8 << 20 };

describe('idle collection', () => {
  it('is due only on an idle loop and once the old generation has grown by the threshold', () => {
    const base = 20 << 20;
    expect(collectionDue({ utilization: 0.01, oldBytes: base + (8 << 20), baselineBytes: base }, rule)).toBe(true);
    expect(collectionDue({ utilization: 0.05, oldBytes: base + (9 << 20), baselineBytes: base }, rule)).toBe(true);
    // Busy: the collection would hold requests that are waiting.
    expect(collectionDue({ utilization: 0.06, oldBytes: base + (64 << 20), baselineBytes: base }, rule)).toBe(false);
    // Idle, but the heap is what the last collection left (mostly live): not collected again.
    expect(collectionDue({ utilization: 0, oldBytes: base + (8 << 20) - 1, baselineBytes: base }, rule)).toBe(false);
  });

  it('frees the garbage a busy spell left in the old generation, after IDLE_CHECKS idle seconds in a row', () => {
    const seen: Array<{ beforeBytes: number; afterBytes: number; ms: number }> = [];
    const collector = createIdleCollector(pino({ level: 'silent' }), { growthBytes: 4 << 20, collected: (c) => seen.push(c) });
    // A busy spell: objects that survive scavenges go old, and once dropped only a full collection frees them.
    // Everything below is synchronous, so no collection of V8's own can come between the spell and the checks.
    const before = oldSpaceBytes();
    let held: Array<Array<{ n: number; s: string }>> = [];
    for (let round = 0; round < 40; round++) {
      held.push(Array.from({ length: 20_000 }, (_, n) => ({ n, s: `value ${n}` })));
      for (let i = 0; i < 50_000; i++) void { i, t: `young ${i}` };
    }
    expect(oldSpaceBytes() - before).toBeGreaterThan(8 << 20);
    held = [];
    expect(held.length).toBe(0);
    // A busy second between quiet ones starts the count again.
    for (const u of [0, 0, 0, 0, 0.5, 0, 0, 0, 0]) collector.check(u);
    expect(seen).toEqual([]);
    collector.check(0);
    expect(seen.length).toBe(1);
    expect(seen[0]!.beforeBytes - seen[0]!.afterBytes).toBeGreaterThan(8 << 20);
  });
});
