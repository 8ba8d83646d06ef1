import { describe, expect, it } from 'vitest';
import { JsonBytes, jsonInSlices } from '../../src/lib/json-slices.js';
import { Pace } from '../../src/lib/turns.js';

/** A Pace whose every turn is spent: each value written is a slice, followed by a turn of the event loop. */
class EverySlice extends Pace {
  turns = 0;
  override spent(): boolean {
    return true;
  }
  override async next(): Promise<void> {
    this.turns++;
    await super.next();
  }
}

describe('jsonInSlices', () => {
  const values: unknown[] = [
    {},
    [],
    { a: 1, b: 'two', c: null, d: true, e: [1, [2, []], { f: {} }] },
    { skipped: undefined, fn: () => 1, kept: 0, list: [undefined, () => 1, Symbol('s'), NaN, -0, 1e21] },
    { text: 'quotes " and \\ and \u2028 and é and 😀 and \u0000', when: new Date(0), nested: { toJSON: () => ({ made: 'by toJSON' }) } },
    Array.from({ length: 300 }, (_, i) => ({ i, name: `n${i}`, flags: [i % 2 === 0, i % 3 === 0] })),
  ];

  it('writes what JSON.stringify writes, in many turns when every slice spends one', async () => {
    for (const value of values) {
      const pace = new EverySlice();
      expect((await jsonInSlices(value as object, pace)).toString()).toBe(JSON.stringify(value));
      expect(pace.turns).toBeGreaterThan(0);
    }
  });

  it('writes JsonBytes as they are, where JSON.stringify refuses them', async () => {
    const part = JsonBytes.of({ schema: { type: 'string' }, é: 'ü' });
    const value = { before: 1, part, list: [part, 2], after: 'x' };
    const expected = JSON.stringify({ before: 1, part: { schema: { type: 'string' }, é: 'ü' }, list: [{ schema: { type: 'string' }, é: 'ü' }, 2], after: 'x' });
    expect((await jsonInSlices(value, new EverySlice())).toString()).toBe(expected);
    expect(() => JSON.stringify(value)).toThrow(/jsonInSlices/);
  });
});
