import { describe, expect, it } from 'vitest';
import { compareCodePoints, instantKey, simpleLowercase } from '../../src/lib/query-functions.js';
import { checkFilter, type Filter } from '../../src/records/query/check.js';
import { matchesFilter, type FilterableRecord } from '../../src/records/query/evaluate.js';
import type { Field } from '../../src/records/fields.js';

const fields: Field[] = [
  { name: 'title', type: 'text', required: false },
  { name: 'priority', type: 'integer', required: false },
  { name: 'score', type: 'number', required: false },
  { name: 'done', type: 'boolean', required: false },
  { name: 'due', type: 'datetime', required: false },
  { name: 'meta', type: 'json', required: false },
];

const fault = (input: string) => {
  const r = checkFilter(input, fields);
  if (!('faults' in r)) throw new Error(`expected a fault for ${input}`);
  return r.faults[0]!;
};
const filter = (input: string): Filter => {
  const r = checkFilter(input, fields);
  if (!('filter' in r)) throw new Error(`${input}: ${JSON.stringify(r.faults)}`);
  return r.filter;
};
const rec = (data: Record<string, unknown>, extra: Partial<FilterableRecord> = {}): FilterableRecord => ({
  id: 'rec_01', version: 1, createdAt: Date.UTC(2026, 0, 1), updatedAt: Date.UTC(2026, 0, 2), data, ...extra,
});
const holds = (input: string, data: Record<string, unknown>, extra?: Partial<FilterableRecord>) => matchesFilter(filter(input), rec(data, extra));

describe('filter syntax', () => {
  it('parses the grammar with free whitespace, both quotes and escapes', () => {
    expect(holds(`title = 'it\\'s' && (priority>2||!done=true)`, { title: "it's", priority: 3 })).toBe(true);
    expect(holds(`title="a\\"b\\\\"`, { title: 'a"b\\' })).toBe(true);
    expect(holds('score = -1.5e2', { score: -150 })).toBe(true);
  });

  it.each([
    ['title =', 7, 'expected a literal'],
    ['title = 1 &&', 12, 'expected a field'],
    ['(title = "x"', 12, 'expected ")"'],
    ['title == "x"', 7, 'expected a literal'],
    ['title = "x', 8, 'unterminated'],
    ['title = "\\n"', 9, 'unknown escape'],
    ['score = 01', 8, 'malformed number'],
    ['score = 1.', 8, 'malformed number'],
    ['title = "x" priority = 1', 12, 'expected "&&"'],
    ['título = "x"', 1, 'unexpected character'],
    ['"é😀" # x', 5, 'unexpected character'],
    ['title = "\u0000"', 9, 'NUL'],
  ])('%s → fault at %i', (input, position, message) => {
    const f = fault(input);
    expect(f.position).toBe(position);
    expect(f.message).toContain(message);
  });

  it('enforces the length, comparison and depth limits', () => {
    expect(fault(`title = "${'x'.repeat(2040)}"`).message).toContain('longer than 2048');
    expect(fault(Array.from({ length: 51 }, () => 'priority = 1').join(' || ')).message).toContain('more than 50 comparisons');
    expect('filter' in checkFilter(Array.from({ length: 50 }, () => 'priority = 1').join(' || '), fields)).toBe(true);
    expect('filter' in checkFilter(`${'!'.repeat(10)}done = true`, fields)).toBe(true);
    expect(fault(`${'('.repeat(11)}done = true${')'.repeat(11)}`)).toEqual({ message: 'nested more than 10 deep', position: 10 });
  });
});

describe('filter type check', () => {
  it.each([
    ['nope = 1', 0, 'unknown field "nope"'],
    ['priority = 1.5', 11, 'an integer field'],
    ['priority = "1"', 11, 'an integer field'],
    ['score = true', 8, 'a number field'],
    ['title = 3', 8, 'a text field'],
    ['due = "tomorrow"', 6, 'RFC 3339'],
    ['due = "2026-02-31T00:00:00Z"', 6, 'RFC 3339'],
    ['createdAt > 5', 12, 'a datetime field'],
    ['priority ~ 1', 9, 'text fields only'],
    ['done > false', 5, 'boolean'],
    ['meta = 1', 5, 'json field'],
    ['title > null', 6, 'null compares only'],
  ])('%s → fault at %i', (input, position, message) => {
    const f = fault(input);
    expect(f.position).toBe(position);
    expect(f.message).toContain(message);
  });

  it('reports every type fault, each with its position', () => {
    const r = checkFilter('nope = 1 && title = 2', fields);
    expect('faults' in r && r.faults.map((f) => f.position)).toEqual([0, 20]);
  });
});

describe('filter semantics', () => {
  it('= null matches absent or null; != null a present value', () => {
    expect(holds('priority = null', {})).toBe(true);
    expect(holds('priority = null', { priority: null })).toBe(true);
    expect(holds('priority != null', { priority: 0 })).toBe(true);
    expect(holds('meta != null', { meta: { a: 1 } })).toBe(true);
    expect(holds('meta = null', { meta: { a: 1 } })).toBe(false);
  });

  it('two-valued logic: a comparison with an absent field is false, and ! negates it', () => {
    expect(holds('priority > 2', {})).toBe(false);
    expect(holds('priority != 2', {})).toBe(false);
    expect(holds('!(priority > 2)', {})).toBe(true);
    expect(holds('!(priority != 2)', {})).toBe(true);
    expect(holds('title !~ "x"', {})).toBe(false);
    expect(holds('!(title !~ "x")', {})).toBe(true);
  });

  it('~ is a literal, case-insensitive contains by the simple lowercase mapping', () => {
    expect(holds('title ~ "ÄB"', { title: 'xäby' })).toBe(true);
    expect(holds('title ~ "σ"', { title: 'ΟΔΟΣ' })).toBe(true);
    expect(holds('title ~ "i"', { title: 'İstanbul' })).toBe(true);
    expect(holds('title ~ "%"', { title: 'abc' })).toBe(false);
    expect(holds('title ~ "a_c"', { title: 'abc' })).toBe(false);
    expect(holds('title ~ "a_c"', { title: 'xA_Cx' })).toBe(true);
    expect(holds('title !~ "B"', { title: 'abc' })).toBe(false);
    expect(simpleLowercase('ÄΣİẞǅ')).toBe('äσißǆ');
  });

  it('orders text by code point, numbers numerically, booleans false < true', () => {
    expect(holds('title > "\uffff"', { title: '😀' })).toBe(true);
    expect(compareCodePoints('\uffff', '😀')).toBeLessThan(0);
    expect(compareCodePoints('a', 'ab')).toBeLessThan(0);
    expect(holds('title < "a"', { title: 'Z' })).toBe(true);
    expect(holds('score >= 2', { score: 2.0 })).toBe(true);
    expect(holds('score = 0.10000000000000001', { score: 0.1 })).toBe(true);
    expect(holds('done != true', { done: false })).toBe(true);
  });

  it('compares datetimes as instants, to the nanosecond', () => {
    expect(holds('due = "2026-01-01T12:00:00+02:00"', { due: '2026-01-01T10:00:00Z' })).toBe(true);
    expect(holds('due < "2026-01-01T10:00:00.000000001Z"', { due: '2026-01-01T10:00:00Z' })).toBe(true);
    expect(holds('due > "2025-12-31T23:59:59-23:59"', { due: '2026-01-01T10:00:00Z' })).toBe(false);
    expect(instantKey('1970-01-01T00:00:00Z')).toBe('062167305600.000000000');
    expect(instantKey('0000-01-01T00:00:00+23:59')! < instantKey('9999-12-31T23:59:59.999999999-23:59')!).toBe(true);
  });

  it('reads the reserved members: id, version, createdAt and updatedAt', () => {
    expect(holds('id = "rec_01" && version >= 1', {})).toBe(true);
    expect(holds('createdAt = "2026-01-01T00:00:00Z"', {})).toBe(true);
    expect(holds('createdAt > "2025-12-31T23:59:59.9999Z"', {})).toBe(true);
    expect(holds('createdAt >= "2026-01-01T00:00:00.0001Z"', {})).toBe(false);
    expect(holds('createdAt < "2026-01-01T00:00:00.0001Z"', {})).toBe(true);
    expect(holds('createdAt = "2026-01-01T00:00:00.0001Z"', {})).toBe(false);
  });
});
