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

const STATUSES = ['open', 'closed', 'waiting', 'done'];

describe.each(DIALECTS)('indexed fields (%s)', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(dialect);
  });
  afterEach(async () => t?.close());

  const admin = (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: t.admin.headers, ...(payload === undefined ? {} : { payload }) });
  const indexExists = async (collection: string, field: string) =>
    (await t.ctx.database.caps.query.indexState(fieldIndexName(collection, field)).execute(t.ctx.database.db)).rows.length > 0;

  // PostgreSQL: the statistics object that goes with a text field's index (none on SQLite, none for other types).
  const statisticsExist = async (collection: string, field: string) =>
    dialect !== 'postgres' ||
    (await sql`select 1 from pg_statistic_ext where stxname = ${`${fieldIndexName(collection, field)}_stats`}`.execute(t.ctx.database.db)).rows.length > 0;

  async function seed(collection: string, n: number): Promise<void> {
    const now = Date.now();
    for (let start = 0; start < n; start += 200) {
      const rows = Array.from({ length: Math.min(200, n - start) }, (_, k) => {
        const i = start + k;
        const data = { status: i % 101 === 0 ? 'blocked' : STATUSES[i % 4], priority: i % 7 === 0 ? null : i % 6, title: `issue ${i} ${'x'.repeat(200)}` };
        return { id: newId('rec', now + i), collection, version: 1, data: JSON.stringify(data), created_at: now, updated_at: now };
      });
      await t.ctx.database.db.insertInto('records').values(rows).execute();
    }
    if (t.ctx.database.caps.sharedByProcesses) await sql`analyze records`.execute(t.ctx.database.db);
    else await sql`analyze`.execute(t.ctx.database.db);
  }

  async function plan(collection: string, filter: string, sort: string): Promise<string> {
    const c = (await findCollection(t.ctx.database.db, collection))!;
    const checked = checkFilter(filter, c.fields);
    if (!('filter' in checked)) throw new Error(filter);
    const query = { collection, filter: checked.filter, sort: parseSort(sort, c.fields), after: null };
    return explainPlan(t.ctx.database.db, t.ctx.database.caps.query, matchingSql(t.ctx.database.caps.query, query, 51).compile(t.ctx.database.db));
  }

  const fullScan = (p: string) => /Seq Scan on records|SCAN records(?! USING)/.test(p);
  const sorts = (p: string) => /\bSort\b|TEMP B-TREE/.test(p);

  it('a filtered, sorted page on indexed fields reads the index, not the whole collection', async () => {
    const fields = [{ name: 'status', type: 'text', indexed: true }, { name: 'priority', type: 'integer', indexed: true }, { name: 'title', type: 'text' }];
    const created = await admin('POST', '/admin/v1/collections', { name: 'issues', fields });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ fields: [{ name: 'status', indexed: true }, { name: 'priority', indexed: true }, { name: 'title', indexed: false }] });
    expect((await admin('POST', '/admin/v1/collections', { name: 'others', fields })).statusCode).toBe(201);
    await seed('issues', 4000);
    await seed('others', 2000);

    // A quarter of the records are open: the page walks the sort's index and stops after 51 matches, instead of
    // reading every open record and sorting them (what PostgreSQL did without statistics on the status expression).
    const w11 = await plan('issues', "status = 'open' && priority >= 3", '-priority');
    expect(w11).toContain(fieldIndexName('issues', 'priority'));
    expect(sorts(w11), w11).toBe(false);
    expect(fullScan(w11), w11).toBe(false);
    const byStatus = await plan('issues', "status = 'blocked'", ''); // 40 of 4,000
    expect(byStatus).toContain(fieldIndexName('issues', 'status'));
    expect(fullScan(byStatus), byStatus).toBe(false);
    const sorted = await plan('issues', 'priority >= 0', 'priority');
    expect(sorted).toContain(fieldIndexName('issues', 'priority'));
    expect(fullScan(sorted), sorted).toBe(false);

    // The answers are those of the same query without indexes.
    const token = await t.token();
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records?filter=${encodeURIComponent("status = 'open' && priority >= 3")}&sort=-priority&limit=50&count=true`, headers: { authorization: `Bearer ${token}` } });
    const body = res.json() as { items: Array<{ data: { status: string; priority: number } }>; totalCount: number };
    expect(body.items).toHaveLength(50);
    expect(body.items.every((i) => i.data.status === 'open' && i.data.priority >= 3)).toBe(true);
    expect(body.items.map((i) => i.data.priority)).toEqual([...body.items.map((i) => i.data.priority)].sort((a, b) => b - a));
    expect(body.totalCount).toBe(Array.from({ length: 4000 }, (_, i) => i).filter((i) => i % 4 === 0 && i % 101 !== 0 && i % 7 !== 0 && i % 6 >= 3).length);
  }, 60_000);

  it('PATCH adds and drops indexes; deleting the collection drops them; json fields and a 17th index are refused', async () => {
    expect((await admin('POST', '/admin/v1/collections', { name: 'tasks', fields: [{ name: 'a', type: 'text' }, { name: 'd', type: 'datetime' }] })).statusCode).toBe(201);
    expect(await indexExists('tasks', 'd')).toBe(false);
    const patched = await admin('PATCH', '/admin/v1/collections/tasks', { fields: [{ name: 'a', type: 'text' }, { name: 'd', type: 'datetime', indexed: true }] });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ fields: [{ name: 'a', indexed: false }, { name: 'd', indexed: true }] });
    expect(await indexExists('tasks', 'd')).toBe(true);
    expect((await admin('GET', '/admin/v1/api/schema')).json()).toMatchObject({ collections: [{ name: 'tasks', fields: [{ indexed: false }, { indexed: true }] }] });
    expect((await admin('PATCH', '/admin/v1/collections/tasks', { fields: [{ name: 'a', type: 'text', indexed: true }, { name: 'd', type: 'datetime' }] })).statusCode).toBe(200);
    expect(await indexExists('tasks', 'd')).toBe(false);
    expect(await indexExists('tasks', 'a')).toBe(true);
    expect(await statisticsExist('tasks', 'a')).toBe(true);
    const json = await admin('PATCH', '/admin/v1/collections/tasks', { fields: [{ name: 'a', type: 'text' }, { name: 'd', type: 'datetime' }, { name: 'j', type: 'json', indexed: true }] });
    expect(json.statusCode).toBe(422);
    const many = Array.from({ length: 17 }, (_, i) => ({ name: `f${i}`, type: 'integer', indexed: true }));
    const tooMany = await admin('POST', '/admin/v1/collections', { name: 'wide', fields: many });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/fields', message: 'at most 16 indexed fields' }] });
    expect((await admin('DELETE', '/admin/v1/collections/tasks')).statusCode).toBe(204);
    expect(await indexExists('tasks', 'a')).toBe(false);
    if (dialect === 'postgres') expect(await statisticsExist('tasks', 'a')).toBe(false);
  });

  it.runIf(dialect === 'postgres')('a failed build leaves no index behind and the field unindexed', async () => {
    expect((await admin('POST', '/admin/v1/collections', { name: 'bad', fields: [{ name: 'n', type: 'number' }] })).statusCode).toBe(201);
    // A value no valid write can store: the index's numeric cast fails halfway through the concurrent build.
    const now = Date.now();
    await t.ctx.database.db.insertInto('records').values({ id: newId('rec', now), collection: 'bad', version: 1, data: '{"n":"not a number"}', created_at: now, updated_at: now }).execute();
    const res = await admin('PATCH', '/admin/v1/collections/bad', { fields: [{ name: 'n', type: 'number', indexed: true }] });
    expect(res.statusCode).toBe(500);
    expect(await indexExists('bad', 'n')).toBe(false);
    expect((await admin('GET', '/admin/v1/collections/bad')).json()).toMatchObject({ fields: [{ name: 'n', indexed: false }] });
  });
});
