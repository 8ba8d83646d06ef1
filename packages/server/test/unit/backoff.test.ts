import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextAttemptDelay } from '../../src/webhooks/backoff.js';
import { classify } from '../../src/webhooks/outcome.js';

const schedule = [0, 5000, 300_000, 1_800_000];

describe('backoff', () => {
  it('follows the schedule and ends the round after its last step', () => {
    const mid = () => 0.5;
    expect(nextAttemptDelay(schedule, 1, null, mid)).toBe(5000);
    expect(nextAttemptDelay(schedule, 2, null, mid)).toBe(300_000);
    expect(nextAttemptDelay(schedule, 3, null, mid)).toBe(1_800_000);
    expect(nextAttemptDelay(schedule, 4, null, mid)).toBeNull();
  });

  it('jitters within ±10 % and never a 0s step', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 0.9999999, noNaN: true }), fc.integer({ min: 1, max: 3 }), (r, k) => {
        const d = nextAttemptDelay(schedule, k, null, () => r)!;
        expect(d).toBeGreaterThanOrEqual(schedule[k]! * 0.9 - 1);
        expect(d).toBeLessThanOrEqual(schedule[k]! * 1.1 + 1);
      }),
    );
    expect(nextAttemptDelay([0, 0, 0], 1, null, () => 0.99)).toBe(0);
  });

  it('Retry-After lengthens the wait, capped at one hour, and never shortens it', () => {
    expect(nextAttemptDelay(schedule, 1, 120, () => 0.5)).toBe(120_000);
    expect(nextAttemptDelay(schedule, 1, 1, () => 0.5)).toBe(5000);
    expect(nextAttemptDelay(schedule, 1, 999_999, () => 0.5)).toBe(3_600_000);
    expect(nextAttemptDelay(schedule, 4, 10, () => 0.5)).toBeNull();
  });
});

describe('outcome classification', () => {
  it('2xx is delivered; everything else fails with a stable code', () => {
    expect(classify({ kind: 'response', statusCode: 204, retryAfterSeconds: null, snippet: '', durationMs: 1 })).toEqual({ kind: 'delivered' });
    expect(classify({ kind: 'response', statusCode: 302, retryAfterSeconds: null, snippet: '', durationMs: 1 })).toMatchObject({ kind: 'failed', error: { code: 'http_status' } });
    expect(classify({ kind: 'response', statusCode: 429, retryAfterSeconds: 7, snippet: '', durationMs: 1 })).toMatchObject({ retryAfterSeconds: 7 });
    expect(classify({ kind: 'response', statusCode: 500, retryAfterSeconds: 7, snippet: '', durationMs: 1 })).toMatchObject({ retryAfterSeconds: null });
    expect(classify({ kind: 'failure', code: 'timeout', message: 'slow', durationMs: 1 })).toMatchObject({ error: { code: 'timeout' } });
  });
});
