import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ATTEMPT_ERRORS, type AttemptErrorCode } from '../../src/errors.js';
import { decide, type AttemptResult, type NotAttemptedReason } from '../../src/webhooks/decision.js';

/** The schedule the docs' table is written for: `0s,5s,1m`. */
const SCHEDULE = [0, 5000, 60_000];
const NOW = Date.parse('2026-11-23T12:00:00Z');

interface Row {
  line: string;
  result: AttemptResult;
  attemptInRound: number;
  expect: { kind: 'delivered' } | { kind: 'dead'; code: string } | { kind: 'not-attempted' } | { kind: 'retry'; waitMs: number; jittered: boolean; gone: boolean };
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000 };

/** Every row of "What an attempt means" in docs/delivery-states.md, read as a test case. */
function docRows(): Row[] {
  const doc = readFileSync(new URL('../../../../docs/delivery-states.md', import.meta.url), 'utf8');
  const section = doc.split('## What an attempt means')[1]!.split('\n## ')[0]!;
  const lines = section.split('\n').filter((l) => /^\| .+ \| \d \|/.test(l));
  return lines.map((line) => {
    const [what = '', attempt = '', retryAfterCell = '', decision = ''] = line.split('|').slice(1, -1).map((c) => c.trim());
    const retryAfter = retryAfterCell.replace(/`/g, '');
    const status = /^`(\d{3})`$/.exec(what);
    const failure = /^`([a-z_]+)`$/.exec(what);
    const skipped = /^not attempted: `([a-z-]+)`$/.exec(what);
    const accepted = what.startsWith('accepted: ');
    const result: AttemptResult = status
      ? { kind: 'response', statusCode: Number(status[1]), retryAfterSeconds: retryAfter === '' ? null : Number(retryAfter) }
      : failure
        ? { kind: 'failure', code: failure[1] as AttemptErrorCode, message: 'as reported' }
        : accepted
          ? { kind: 'accepted' }
          : { kind: 'not-attempted', reason: skipped![1] as NotAttemptedReason };
    const retry = /^retry in (\d+) (s|m)( ± 10 %)?/.exec(decision);
    const dead = /^dead \(`([a-z_]+)`\)/.exec(decision);
    const expected: Row['expect'] = decision === 'delivered'
      ? { kind: 'delivered' }
      : dead
        ? { kind: 'dead', code: dead[1]! }
        : retry
          ? { kind: 'retry', waitMs: Number(retry[1]) * UNIT_MS[retry[2]!]!, jittered: retry[3] !== undefined, gone: decision.includes('target disabled (`gone`)') }
          : decision.startsWith('not attempted')
            ? { kind: 'not-attempted' }
            : (() => {
                throw new Error(`cannot read the decision of: ${line}`);
              })();
    return { line, result, attemptInRound: Number(attempt), expect: expected };
  });
}

const rows = docRows();

describe('decide(): every row of the docs', () => {
  it('the table is there, and names every attempt error code but target_deleted (a transition, not an attempt)', () => {
    expect(rows.length).toBeGreaterThanOrEqual(20);
    const named = new Set(rows.flatMap((r) => (r.result.kind === 'failure' ? [r.result.code] : [])).concat(['http_status', 'target_deleted']));
    expect([...named].sort()).toEqual(Object.keys(ATTEMPT_ERRORS).sort());
  });

  it.each(rows.map((r) => [r.line, r] as const))('%s', (_line, row) => {
    // The lowest, middle and highest jitter: a jittered wait stays within ±10 %, an exact one never moves.
    for (const jitter of [0, 0.5, 0.999999]) {
      const d = decide({ result: row.result, attemptInRound: row.attemptInRound, schedule: SCHEDULE, now: NOW, jitter });
      const want = row.expect;
      if (want.kind === 'retry') {
        expect(d.kind).toBe('retry');
        if (d.kind !== 'retry') return;
        const wait = d.at - NOW;
        if (want.jittered) {
          expect(wait).toBeGreaterThanOrEqual(Math.floor(want.waitMs * 0.9));
          expect(wait).toBeLessThanOrEqual(Math.ceil(want.waitMs * 1.1));
        } else expect(wait).toBe(want.waitMs);
        expect(d.error.code).toBe(row.result.kind === 'response' ? 'http_status' : (row.result as { code: string }).code);
        expect(d.disable).toBe(want.gone ? 'gone' : undefined);
      } else if (want.kind === 'dead') {
        expect(d).toMatchObject({ kind: 'dead', error: { code: want.code } });
      } else expect(d.kind).toBe(want.kind);
    }
  });
});

describe('decide(): properties', () => {
  it('exactly one decision; 2xx is delivered whatever the attempt; a jittered wait stays within ±10 %; a 0s step is never jittered', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), fc.integer({ min: 1, max: 5 }), fc.double({ min: 0, max: 0.9999999, noNaN: true }), (status, k, jitter) => {
        const schedule = [0, 0, 5000, 60_000, 3_600_000];
        const d = decide({ result: { kind: 'response', statusCode: status, retryAfterSeconds: null }, attemptInRound: k, schedule, now: NOW, jitter });
        if (status >= 200 && status < 300) return d.kind === 'delivered';
        if (k >= schedule.length) return status === 410 ? d.kind === 'retry' && d.at === NOW && d.disable === 'gone' : d.kind === 'dead';
        if (d.kind !== 'retry' || (d.disable === 'gone') !== (status === 410)) return false;
        const base = schedule[k]!;
        const wait = d.at - NOW;
        return base === 0 ? wait === 0 : wait >= Math.floor(base * 0.9) && wait <= Math.ceil(base * 1.1);
      }),
    );
  });
});
