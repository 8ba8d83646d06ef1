import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { collectionDue, oldSpaceBytes, startIdleCollection } from '../../src/lib/idle-collection.js';

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

  it('frees the garbage a busy spell left in the old generation', async () => {
    const seen: Array<{ beforeBytes: number; afterBytes: number; ms: number }> = [];
    let collected: () => void = () => {};
    const first = new Promise<void>((resolve) => (collected = resolve));
    // Every check counts as idle here; the growth is what decides.
    const stop = startIdleCollection(pino({ level: 'silent' }), {
      everyMs: 20,
      growthBytes: 4 << 20,
      idleUtilization: 1,
      collected: (c) => {
        seen.push(c);
        collected();
      },
    });
    try {
      // A busy spell: objects that survive scavenges go old, and once dropped only a full collection frees them.
      const before = oldSpaceBytes();
      let held: Array<Array<{ n: number; s: string }>> = [];
      for (let round = 0; round < 40; round++) {
        held.push(Array.from({ length: 20_000 }, (_, n) => ({ n, s: `value ${n}` })));
        for (let i = 0; i < 50_000; i++) void { i, t: `young ${i}` };
      }
      expect(oldSpaceBytes() - before).toBeGreaterThan(8 << 20);
      held = [];
      await first;
    } finally {
      stop();
    }
    expect(seen[0]!.beforeBytes - seen[0]!.afterBytes).toBeGreaterThan(8 << 20);
  });
});
