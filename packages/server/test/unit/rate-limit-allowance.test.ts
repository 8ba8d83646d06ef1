import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rateAllowance } from '../../src/webhooks/queue/claim.js';

const T = 1_700_000_000_000; // a second's start

/**
 * Claims at the given times (ms after T, in order), each wanting `want` jobs, taking what rateAllowance gives from one
 * bucket as claim.ts stores it: the start time of every job taken.
 */
function run(perSecond: number, claims: ReadonlyArray<{ at: number; want: number }>): number[] {
  let bucket = { window: null as number | null, used: 0 };
  const starts: number[] = [];
  for (const { at, want } of claims) {
    const a = rateAllowance(perSecond, bucket, T + at);
    const n = Math.min(want, a.left);
    if (n > 0) bucket = { window: a.second, used: a.used + n };
    for (let i = 0; i < n; i++) starts.push(at);
  }
  return starts;
}

const busiest = (starts: readonly number[], ms: number) =>
  Math.max(0, ...starts.map((s) => starts.filter((t) => t >= s && t <= s + ms).length));

/** claim.ts rateAllowance: the shared bucket of a rate-limited target (SPEC §13 `rateLimit`), as a pure function. */
describe('rateAllowance', () => {
  it('any sequence of claims: at most perSecond a second, and in any closed 10 s window at most 10.25 × perSecond (the SPEC allows 11×)', () => {
    // Gaps that often land on quarter-second boundaries, where the bursts are.
    const gap = fc.oneof(fc.integer({ min: 0, max: 700 }), fc.constantFrom(0, 1, 249, 250, 251, 500, 1000));
    const claims = fc.array(fc.record({ gap, want: fc.integer({ min: 0, max: 40 }) }), { maxLength: 120 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), claims, (perSecond, list) => {
        let at = 0;
        const starts = run(perSecond, list.map(({ gap, want }) => ({ at: (at += gap), want })));
        const bySecond = new Map<number, number>();
        for (const s of starts) bySecond.set(Math.floor(s / 1000), (bySecond.get(Math.floor(s / 1000)) ?? 0) + 1);
        expect(Math.max(0, ...bySecond.values())).toBeLessThanOrEqual(perSecond);
        // 41 quarter-seconds at most: any 40 in a row give perSecond × 10, and one quarter at most ceil(perSecond / 4).
        expect(busiest(starts, 10_000)).toBeLessThanOrEqual(perSecond * 10 + Math.ceil(perSecond / 4));
      }),
      { numRuns: 300 },
    );
  });

  it('a backlog claimed every 125 ms for 30 s at 20/s: 205 in the busiest closed 10 s window, not the 220 of whole-second bursts', () => {
    const starts = run(20, Array.from({ length: 240 }, (_, i) => ({ at: i * 125, want: 40 })));
    expect(starts).toHaveLength(600);
    expect(busiest(starts, 10_000)).toBe(205);
    expect(busiest(starts, 1000)).toBe(25);
  });

  it('a backlog that appears mid-second gets that quarter-second\'s share, not the whole second\'s', () => {
    expect(rateAllowance(20, { window: null, used: 0 }, T + 100).left).toBe(5);
    expect(rateAllowance(20, { window: null, used: 0 }, T + 600).left).toBe(5);
    // The first half used 4 of its 10: the third quarter still gets only its own 5.
    expect(rateAllowance(20, { window: T / 1000, used: 4 }, T + 600)).toMatchObject({ used: 10, left: 5 });
    // An odd rate: shares of ceil(5 × k / 4), so 2, 1, 1, 1.
    expect(rateAllowance(5, { window: null, used: 0 }, T).left).toBe(2);
    expect(rateAllowance(5, { window: T / 1000, used: 2 }, T + 250).left).toBe(1);
    expect(rateAllowance(5, { window: T / 1000, used: 3 }, T + 500).left).toBe(1);
    expect(rateAllowance(1, { window: null, used: 0 }, T + 500).left).toBe(0);
  });

  it('says when more may be taken: the next quarter-second, or the next second once the second is used up', () => {
    expect(rateAllowance(20, { window: null, used: 0 }, T + 100).nextAt(5)).toBe(T + 250);
    expect(rateAllowance(20, { window: null, used: 0 }, T + 800).nextAt(5)).toBe(T + 1000);
    expect(rateAllowance(1, { window: null, used: 0 }, T + 100).nextAt(1)).toBe(T + 1000);
  });

  it('a stale bucket (an earlier second) is empty; one a clock ahead already wrote (a later second) counts against this one', () => {
    expect(rateAllowance(20, { window: T / 1000 - 1, used: 20 }, T + 100)).toMatchObject({ second: T / 1000, used: 0, left: 5 });
    expect(rateAllowance(20, { window: T / 1000 + 1, used: 3 }, T + 100)).toMatchObject({ second: T / 1000 + 1, used: 3, left: 2 });
  });
});
