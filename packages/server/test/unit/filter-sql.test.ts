import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/db/dialects/sqlite.js';
import type { Field } from '../../src/records/fields.js';
import { checkFilter } from '../../src/records/query/check.js';
import { filterSql } from '../../src/records/query/compile.js';

const fields: Field[] = [
  { name: 'title', type: 'text', required: false, indexed: false },
  { name: 'n', type: 'integer', required: false, indexed: false },
];
const database = openSqlite(':memory:', 'NORMAL');
afterAll(() => database.close());

const compile = (input: string) => {
  const r = checkFilter(input, fields);
  if (!('filter' in r)) throw new Error(input);
  return filterSql(database.caps.query, r.filter).compile(database.db);
};

describe('filter SQL', () => {
  it('binds every literal as a parameter, never in the SQL text', () => {
    const hostile = `'; drop table records; -- %_\\\\ /*`;
    const c = compile(`title = "${hostile.replace(/\\\\/g, '\\\\\\\\')}" || title ~ "%x_" || n >= 42`);
    expect(c.sql).not.toContain('drop table');
    expect(c.sql).not.toContain('42');
    expect(c.sql).not.toContain('%x_');
    expect(c.parameters).toEqual([hostile, '%x_', 42]);
  });

  it('pushes negations down to the comparisons, so an absent field makes a negated comparison true', () => {
    const c = compile('!(n > 2 && title = "a")');
    expect(c.sql).not.toMatch(/\bnot\s*\(/i);
    expect(c.sql).toMatch(/is null or .* <= \?/);
  });
});
