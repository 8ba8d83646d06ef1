import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { findCollection } from '../../src/records/collections-store.js';
import { checkFilter } from '../../src/records/query/check.js';
import { explainPlan, fieldIndexName } from '../../src/records/query/field-index-store.js';
import { matchingSql } from '../../src/records/query/records-query-store.js';
import { parseSort } from '../../src/records/query/sort.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

// `~` terms over one field share one lowering of it a row (PostgreSQL: QueryDialect.loweredFrom). Outside, 50 terms
// over 200 records of 50 KB took 6.0 s on PostgreSQL (each term parsed the record's JSON and lowered the value again;
// with a non-ASCII capital every ~11 characters, over 60 s), 0.4 s and 1.7 s after.
describe.each(DIALECTS)('~ terms over the same fields (%s)', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(dialect);
  });
  afterEach(async () => t?.close());

  const admin = (method: 'POST', url: string, payload: unknown) => t.app.inject({ method, url, headers: t.admin.headers, payload });

  async function statement(collection: string, filter: string, sort: string) {
    const c = (await findCollection(t.ctx.database.db, collection))!;
    const checked = checkFilter(filter, c.fields);
    if (!('filter' in checked)) throw new Error(filter);
    const query = { collection, filter: checked.filter, sort: parseSort(sort, c.fields), after: null };
    return matchingSql(t.ctx.database.caps.query, query, 51).compile(t.ctx.database.db);
  }

  it('answer as one term at a time would, fields named like records columns included', async () => {
    // `data`, `doc` and `created_at` are allowed field names: none may be confused with a column of the statement.
    const fields = [{ name: 'data', type: 'text' }, { name: 'doc', type: 'text' }, { name: 'created_at', type: 'text' }, { name: 'n', type: 'integer', indexed: true }];
    expect((await admin('POST', '/admin/v1/collections', { name: 'notes', fields })).statusCode).toBe(201);
    const words = ['Alpha', 'BETA', 'gamma', 'ÉCOLE', 'delta'];
    const rows = Array.from({ length: 60 }, (_, i) => ({
      data: `${words[i % 5]} ${i}`,
      doc: i % 3 === 0 ? null : `${words[(i + 1) % 5]} note`,
      created_at: `${words[(i + 2) % 5]}`,
      n: i,
    }));
    const now = Date.now();
    await t.ctx.database.db
      .insertInto('records')
      .values(rows.map((d, i) => ({ id: newId('rec', now + i), collection: 'notes', version: 1, data: JSON.stringify(d), created_at: now, updated_at: now })))
      .execute();
    const token = await t.token();
    const list = async (filter: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/notes/records?filter=${encodeURIComponent(filter)}&sort=-n&limit=100&count=true`, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { items: Array<{ data: { n: number } }>; totalCount: number };
      expect(body.totalCount).toBe(body.items.length);
      return body.items.map((i) => i.data.n);
    };
    const has = (v: string | null, s: string) => v !== null && v.toLowerCase().includes(s);
    const expected = (keep: (r: (typeof rows)[number]) => boolean) => rows.filter(keep).map((r) => r.n).sort((a, b) => b - a);

    expect(await list("data ~ 'alp' || data ~ 'école' || doc ~ 'BETA'")).toEqual(expected((r) => has(r.data, 'alp') || has(r.data, 'école') || has(r.doc, 'beta')));
    // `!~` with an absent value is false, like every comparison with it; `!(… ~ …)` is true (SPEC §8).
    expect(await list("data ~ 'a' && doc !~ 'note' ")).toEqual(expected((r) => has(r.data, 'a') && r.doc !== null && !has(r.doc, 'note')));
    expect(await list("data ~ 'a' && !(doc ~ 'note')")).toEqual(expected((r) => has(r.data, 'a') && !has(r.doc, 'note')));
    expect(await list("!(created_at ~ 'GAMMA') && data ~ '1'")).toEqual(expected((r) => !has(r.created_at, 'gamma') && has(r.data, '1')));
    expect(await list("doc ~ 'note' && doc ~ 'alp' && n >= 10")).toEqual(expected((r) => has(r.doc, 'note') && has(r.doc, 'alp') && r.n >= 10));
  });

  it.runIf(dialect === 'postgres')('PostgreSQL lowers each field once a row, and an indexed sort still reads its index', async () => {
    const fields = [{ name: 'title', type: 'text' }, { name: 'status', type: 'text' }, { name: 'priority', type: 'integer', indexed: true }];
    expect((await admin('POST', '/admin/v1/collections', { name: 'issues', fields })).statusCode).toBe(201);
    const now = Date.now();
    await t.ctx.database.db
      .insertInto('records')
      .values(Array.from({ length: 3000 }, (_, i) => ({ id: newId('rec', now + i), collection: 'issues', version: 1, data: JSON.stringify({ title: `issue ${i}`, status: 'open', priority: i % 50 }), created_at: now, updated_at: now })))
      .execute();
    await sql`analyze records`.execute(t.ctx.database.db);
    const filter = [...Array.from({ length: 20 }, (_, i) => `title ~ 'w${i}'`), "status !~ 'closed'"].join(' || ');
    const compiled = await statement('issues', filter, '-priority');
    // Two fields: two lowerings and one parse of the record's JSON in the statement, whatever the number of terms.
    expect(compiled.sql.match(/svc_lower\(/g)).toHaveLength(2);
    const unfiltered = await statement('issues', 'priority >= 0', '-priority');
    expect(compiled.sql.match(/data::jsonb/g)!.length).toBe(unfiltered.sql.match(/data::jsonb/g)!.length - 1 + 1); // the sort's, the LATERAL's
    const plan = await explainPlan(t.ctx.database.db, t.ctx.database.caps.query, compiled);
    expect(plan).toContain(fieldIndexName('issues', 'priority'));
    expect(plan, plan).not.toMatch(/\bSort\b/);
  });
});
