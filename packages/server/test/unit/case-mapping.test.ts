import { describe, expect, it } from 'vitest';
import { CASE_MAPPING_UNICODE_VERSION, lowercasePairs, lowercaseWork, simpleLowercase } from '../../src/lib/case-mapping.js';
// @ts-expect-error: a plain .mjs script, no types
import { simpleLowercasePairs } from '../../scripts/generate-case-mapping.mjs';

/** Every code point but the surrogates, with its expected simple lowercase straight from the table's pairs. */
function* codePoints(): Generator<[number, number]> {
  const lower = new Map(lowercasePairs());
  for (let c = 0; c <= 0x10ffff; c++) if (c < 0xd800 || c > 0xdfff) yield [c, lower.get(c) ?? c];
}

describe('the one case mapping (SPEC §12)', () => {
  it('is the Unicode simple lowercase mapping: one code point to one, never a chain, İ to i', () => {
    const pairs = lowercasePairs();
    const uppers = new Set(pairs.map(([u]) => u));
    expect(pairs).toHaveLength(1488);
    for (const [, lower] of pairs) expect(uppers.has(lower)).toBe(false);
    const spot = (c: number) => simpleLowercase(String.fromCodePoint(c)).codePointAt(0);
    // ASCII, Latin-1, İ (whose full mapping is two code points), final-sigma-free Σ, ẞ, ǅ, and letters of
    // Unicode 16 and 17 that older tables (glibc 2.36, PostgreSQL's lower()) do not have.
    expect([0x41, 0xc4, 0x130, 0x3a3, 0x1e9e, 0x1c5, 0x1c89, 0xa7dc, 0x10d50, 0x16ea0].map(spot)).toEqual([
      0x61, 0xe4, 0x69, 0x3c3, 0xdf, 0x1c6, 0x1c8a, 0x19b, 0x10d70, 0x16ebb,
    ]);
    expect(simpleLowercase('ΟΔΟΣ')).toBe('οδοσ');
  });

  it('folds every code point the way the table says, alone and inside text', () => {
    const wrong: string[] = [];
    const units: string[] = [];
    const expected: string[] = [];
    for (const [c, lower] of codePoints()) {
      const got = simpleLowercase(String.fromCodePoint(c));
      if (got !== String.fromCodePoint(lower)) wrong.push(`U+${c.toString(16)} → ${[...got].map((x) => x.codePointAt(0)!.toString(16))}`);
      units.push(String.fromCodePoint(c));
      expected.push(String.fromCodePoint(lower));
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    // All of them in one text: the typed-array path, astral pairs included.
    expect(simpleLowercase(units.join(''))).toBe(expected.join(''));
  });

  it('keeps lone surrogates and the length in UTF-16 units', () => {
    const text = 'A\ud800B\udc00C\ud801\udc00\ud801';
    expect(simpleLowercase(text)).toBe('a\ud800b\udc00c\ud801\udc28\ud801');
    expect(simpleLowercase('ÉA\ud83d')).toBe('éa\ud83d');
  });

  it('returns the same string when nothing changes, and counts the text it lowered', () => {
    const text = `lowercase été ${'x'.repeat(100)}`;
    const before = { ...lowercaseWork };
    expect(simpleLowercase(text)).toBe(text);
    expect(lowercaseWork.texts - before.texts).toBe(1);
    expect(lowercaseWork.units - before.units).toBe(text.length);
  });

  it.runIf(process.versions.unicode === CASE_MAPPING_UNICODE_VERSION)('is what the generator makes of this Node\'s ICU (same Unicode version)', () => {
    expect(lowercasePairs()).toEqual(simpleLowercasePairs());
  });
});
