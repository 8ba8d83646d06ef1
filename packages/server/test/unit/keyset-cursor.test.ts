import { describe, expect, it } from 'vitest';
import { decodeKeyset, encodeKeyset, sortValuesDigest, textAfterPrefix } from '../../src/records/query/keyset-cursor.js';
import type { SortKey } from '../../src/records/query/sort.js';

const binding = { fingerprint: 'f', mac: (text: string) => sortValuesDigest([text]) };
const text = (name: string, desc = false): SortKey => ({ target: { kind: 'data', name, type: 'text' }, desc });
const REC = /^rec_[0-9a-z]{26}$/;
const id = `rec_${'0'.repeat(26)}`;

describe('bounded keyset cursors (SPEC §12)', () => {
  it('stays within 1,024 characters for the longest values JSON can make: three keys of escaped and 4-byte characters', () => {
    const keys = [text('a'), text('b', true), text('c')];
    for (const unit of ['\u0001', '"', '😀', 'é', 'x']) {
      const values = [unit.repeat(50_000), `${unit.repeat(49_999)}y`, unit.repeat(300)];
      const cursor = encodeKeyset({ id, values }, keys, binding);
      expect(cursor.length, JSON.stringify(unit)).toBeLessThanOrEqual(1024);
      const back = decodeKeyset(cursor, keys, binding, REC);
      expect(back.cut).toEqual({ keys: [0, 1, 2], digest: sortValuesDigest(values) });
      back.values.forEach((v, i) => expect(values[i]!.startsWith(v as string)).toBe(true));
    }
    // Short values travel whole, with no cut and no digest.
    const short = decodeKeyset(encodeKeyset({ id, values: ['a', 'b', null] }, keys, binding), keys, binding, REC);
    expect(short).toEqual({ id, values: ['a', 'b', null] });
  });

  it('never cuts a surrogate pair in two', () => {
    const keys = [text('a')];
    const back = decodeKeyset(encodeKeyset({ id, values: [`x${'😀'.repeat(100)}`] }, keys, binding, REC), keys, binding, REC);
    expect((back.values[0] as string).isWellFormed()).toBe(true);
    expect(back.values[0]).toBe(`x${'😀'.repeat(47)}`);
  });

  it('finds the least text after every text with a prefix', () => {
    expect(textAfterPrefix('abc')).toBe('abd');
    expect(textAfterPrefix('a\u{10FFFF}\u{10FFFF}')).toBe('b');
    expect(textAfterPrefix('\uD7FF')).toBe('\uE000');
    expect(textAfterPrefix('x😀')).toBe('x😁');
    expect(textAfterPrefix('\u{10FFFF}')).toBeNull();
  });
});
