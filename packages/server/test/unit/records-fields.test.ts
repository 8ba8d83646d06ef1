import { describe, expect, it } from 'vitest';
import { validateData, type Field } from '../../src/records/fields.js';
import { decodeCursor, encodeCursor } from '../../src/lib/cursor.js';
import { idPattern, newId } from '../../src/lib/ids.js';
import { SecretBox, safeEqual } from '../../src/lib/crypto.js';

const fields: Field[] = [
  { name: 'title', type: 'text', required: true },
  { name: 'n', type: 'integer', required: false },
  { name: 'x', type: 'number', required: false },
  { name: 'ok', type: 'boolean', required: false },
  { name: 'at', type: 'datetime', required: false },
  { name: 'j', type: 'json', required: false },
];

describe('field validation', () => {
  it('accepts valid values of every type', () => {
    expect(validateData(fields, { title: 't', n: 3, x: 1.5, ok: false, at: '2026-11-22T10:00:00.123+01:00', j: { any: [null] } }, false)).toEqual([]);
  });
  it('reports every fault with a JSON pointer', () => {
    const errs = validateData(fields, { n: 1.2, x: 'NaN', ok: 1, at: '2026-13-01T00:00:00Z', 'a/b': 1 }, false);
    expect(errs.map((e) => e.path).sort()).toEqual(['/data/a~1b', '/data/at', '/data/n', '/data/ok', '/data/title', '/data/x'].sort());
  });
  it('PATCH may omit required fields but not null them', () => {
    expect(validateData(fields, { n: 2 }, true)).toEqual([]);
    expect(validateData(fields, { title: null }, true)).toHaveLength(1);
    expect(validateData(fields, { n: null }, true)).toEqual([]);
  });
});

describe('ids, cursors and secrets', () => {
  it('ids are prefixed, url-safe and sort by creation', () => {
    const now = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 1000 }, () => newId('rec', now));
    expect(ids.every((id) => idPattern('rec').test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
  });
  it('cursors round-trip and forged ones are refused', () => {
    const id = newId('rec', Date.UTC(2026, 0, 1));
    expect(decodeCursor(encodeCursor(id), idPattern('rec'))).toBe(id);
    expect(() => decodeCursor(encodeCursor('rec_bad'), idPattern('rec'))).toThrowError(/cursor/);
    expect(() => decodeCursor('!!!', idPattern('rec'))).toThrowError();
  });
  it('sealed secrets open only with the same key and row', () => {
    const key = 'a'.repeat(64);
    const box = new SecretBox(key);
    const sealed = box.seal('whsec_abc', 'wh_1');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.open(sealed, 'wh_1')).toBe('whsec_abc');
    expect(() => box.open(sealed, 'wh_2')).toThrow();
    expect(() => new SecretBox('b'.repeat(64)).open(sealed, 'wh_1')).toThrow();
  });
  it('safeEqual compares exactly', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});
