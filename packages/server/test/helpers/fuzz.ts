import fc from 'fast-check';
import { expect } from 'vitest';

/**
 * What fuzz tests send. fast-check's default strings are printable ASCII, which never reach the corners that
 * break servers: these cover every code point (NUL and control characters included), lone surrogates, bytes
 * that are not UTF-8 and percent-encodings that decode to nothing.
 *
 * Runs are replayable: a fixed seed (or SVC_FUZZ_SEED), no Math.random() inside a property, and fast-check
 * prints the seed and path of a failure.
 */
export const FUZZ_SEED = Number(process.env.SVC_FUZZ_SEED ?? 20_261_123);

/** One UTF-16 code unit of any value: lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

export const nastyText = (maxLength = 40): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: codeUnit, maxLength }),
    fc.string({ unit: 'binary-ascii', maxLength }),
    fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud83d', '\u202e', '\ufeff', '𝟘𝟙', '..', '%', '%00', 'null', 'true', '-0', '1e400'),
  );

export const hugeNumber = fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 63, -(2 ** 63), 5e-324, -0, 0.1 + 0.2);

export const nastyJson = (maxDepth = 4): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth, stringUnit: 'binary' }) },
    { weight: 2, arbitrary: nastyText() },
    { weight: 1, arbitrary: hugeNumber },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2, stringUnit: codeUnit }) },
  );

/** Bytes as %XX: any byte sequence, so also ones that are not UTF-8. */
export const percentBytes = (bytes: Uint8Array): string => Array.from(bytes, (b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** A path segment or query value as it appears in the raw URL: well-formed, malformed, over-long or hostile. */
export const rawUrlPiece: fc.Arbitrary<string> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 12 }).map(percentBytes),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
  fc.constantFrom('%', '%f', '%zz', '%ff', '%c3', '%E0%A4%A', '%%', '%00', 'a%00b', '%2e%2e', '..', '.', '%2F', '%ed%a0%80', '%c0%ae', '\u00e9', ';', '*', '~'),
  fc.integer({ min: 150, max: 4000 }).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 60, max: 400 }).map((n) => '%41'.repeat(n)),
);

/** Header values Node lets through: tab, visible ASCII and obs-text bytes. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.constantFrom('\t', ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)), 'é', '\u00ff'), maxLength: 60 }),
  fc.constantFrom('', '*', '"1"', 'W/"1"', '"99999999999999999999"', '"-1"', 'Bearer', 'Bearer ', 'Bearer svc_pat_', 'x'.repeat(300)),
);

export interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** No 5xx; every error is problem+json whose requestId is the X-Request-ID header. */
export function checkAnswer(res: Answer, what: string): void {
  expect(res.statusCode, `${what} → ${res.statusCode} ${res.body.slice(0, 300)}`).toBeLessThan(500);
  expect(res.headers['x-request-id'], what).toBeTruthy();
  if (res.statusCode >= 400 && res.body !== '') {
    expect(String(res.headers['content-type']), what).toContain('application/problem+json');
    const body = JSON.parse(res.body) as { code?: unknown; requestId?: unknown };
    expect(typeof body.code, what).toBe('string');
    expect(body.requestId, what).toBe(res.headers['x-request-id']);
  }
}

/** A status histogram, for the record of what a fuzz run exercised. */
export class Tally {
  requests = 0;
  readonly statuses: Record<string, number> = {};
  add(status: number): void {
    this.requests++;
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
  }
}
