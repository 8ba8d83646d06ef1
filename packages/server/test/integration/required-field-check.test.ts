import type { KyselyPlugin } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { feedMark } from '../../src/events/feed-mark.js';
import type { FeedPosition } from '../../src/events/feed-position.js';
import type { Filter } from '../../src/records/query/check.js';
import { firstMatching } from '../../src/records/query/records-query-store.js';
import { patchCollection } from '../../src/records/collections.js';
import { insertRecords } from '../../src/records/records-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * Making a field required reads every record of the collection. It runs where records queries run (SQLite: a reader
 * thread once past the main connection's budget; both databases: SVC_QUERY_TIMEOUT_MS), then checks in the schema's
 * own write only the records written meanwhile, found through the feed's events after a mark taken before the read.
 */
describe.each(DIALECTS)('making a field required (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const fields = (required: boolean) => [
    { name: 'title', type: 'text', required: true },
    { name: 'points', type: 'integer', required },
    { name: 'meta', type: 'json', required },
  ];

  it('is refused while a record lacks the field or holds null, and allowed once none does', async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', fields(false));
    const token = await t.token();
    const write = (method: 'POST' | 'PATCH', url: string, data: Record<string, unknown>) =>
      t!.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload: { data } });
    const full = await write('POST', '/api/v1/collections/issues/records', { title: 'a', points: 1, meta: { x: 1 } });
    const lacks = await write('POST', '/api/v1/collections/issues/records', { title: 'b', points: 2 });
    expect([full.statusCode, lacks.statusCode]).toEqual([201, 201]);
    const patch = (required: boolean) => t!.app.inject({ method: 'PATCH', url: '/admin/v1/collections/issues', headers: t!.admin.headers, payload: { fields: fields(required) } });

    const refused = await patch(true);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'conflict' });
    // It names the record found and what that record lacks (it has "points").
    expect(refused.json().detail).toBe(`Record ${lacks.json().id} lacks "meta"; fill it in on every record before making it required.`);

    const id = lacks.json().id as string;
    expect((await write('PATCH', `/api/v1/collections/issues/records/${id}`, { meta: null })).statusCode).toBe(200);
    expect((await patch(true)).statusCode).toBe(409);
    expect((await write('PATCH', `/api/v1/collections/issues/records/${id}`, { meta: [] })).statusCode).toBe(200);
    const allowed = await patch(true);
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json().fields.map((f: { required: boolean }) => f.required)).toEqual([true, true, true]);
    expect((await write('POST', '/api/v1/collections/issues/records', { title: 'c', points: 3 })).statusCode).toBe(422);
    expect(t.violations).toEqual([]);
  });

  it('finds, after a feed mark, the records written after it (on SQLite only those)', async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', fields(false));
    const token = await t.token();
    const create = (data: Record<string, unknown>) =>
      t!.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { authorization: `Bearer ${token}` }, payload: { data } });
    const lacking: Filter = { type: 'cmp', target: { kind: 'data', name: 'points', type: 'integer' }, op: '=', operand: { kind: 'null' } };
    const { db, caps } = t.ctx.database;
    const after = async (mark: FeedPosition) => firstMatching(db, caps.query, 'issues', lacking, { changedAfter: mark }, false);
    // On PostgreSQL a mark stays below any transaction still open anywhere on the server (other tests' too), so what
    // was written before it may be found as well: a superset, never less. SQLite's marks are exact.
    const exact = dialect === 'sqlite';
    const before = await create({ title: 'before', points: null });
    expect(before.statusCode).toBe(201);
    const mark = await feedMark(db, caps);
    // Another collection's record lacking the field, after the mark: not this collection's.
    await t.collection('other', fields(false));
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/collections/other/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { title: 'x' } } })).statusCode).toBe(201);
    expect(await firstMatching(db, caps.query, 'issues', lacking, { changedAfter: null }, false)).toBe(before.json().id);
    if (exact) expect(await after(mark)).toBeNull();
    const full = await create({ title: 'after', points: 5 });
    if (exact) expect(await after(mark)).toBeNull();
    // An update after the mark that clears the field is found, as is a create.
    const cleared = await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${full.json().id}`, headers: { authorization: `Bearer ${token}` }, payload: { data: { points: null } } });
    expect(cleared.statusCode).toBe(200);
    expect([full.json().id, ...(exact ? [] : [before.json().id])]).toContain(await after(mark));
    expect(await after(mark)).not.toBeNull();
    const later = await feedMark(db, caps);
    if (exact) expect(await after(later)).toBeNull();
    const last = await create({ title: 'later' });
    expect(last.statusCode).toBe(201);
    expect(await firstMatching(db, caps.query, 'issues', lacking, { changedAfter: later }, true)).not.toBeNull();
    if (exact) expect(await after(later)).toBe(last.json().id);
  });

  /**
   * A write that commits while the check reads: the plugin runs it as the `nth` statement on `queries` (the check's
   * reads) is answered, after that statement's snapshot and before the next step. Each of these is caught by the step
   * after it; with that step gone, the field was made required while a record lacked it.
   */
  for (const [step, nth, kind] of [
    ['the first read', 1, 'create'],
    ['the first read', 1, 'clear'],
    ['the second read', 2, 'create'],
    ['the second read', 2, 'clear'],
  ] as const) {
    it(`finds a record that a ${kind === 'create' ? 'create' : 'field cleared by an update'} made lacking during ${step}`, async () => {
      t = await createTestApp(dialect);
      await t.collection('issues', fields(false));
      const token = await t.token();
      const write = (method: 'POST' | 'PATCH', url: string, data: Record<string, unknown>) =>
        t!.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload: { data } });
      const kept = await write('POST', '/api/v1/collections/issues/records', { title: 'a', points: 1, meta: {} });
      expect(kept.statusCode).toBe(201);
      let statements = 0;
      let during: number | null = null;
      const plugin: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          if (++statements === nth) {
            const res =
              kind === 'create'
                ? await write('POST', '/api/v1/collections/issues/records', { title: 'b' })
                : await write('PATCH', `/api/v1/collections/issues/records/${kept.json().id}`, { points: null });
            during = res.statusCode;
          }
          return args.result;
        },
      };
      const database = { ...t.ctx.database, queries: t.ctx.database.queries.withPlugin(plugin) };
      const refused = await patchCollection({ ...t.ctx, database }, 'issues', fields(true) as never).catch((err: unknown) => err);
      expect(during).toBe(kind === 'create' ? 201 : 200);
      expect(refused).toMatchObject({ code: 'conflict' });
      const after = await t.app.inject({ method: 'GET', url: '/admin/v1/collections/issues', headers: t.admin.headers });
      expect(after.json().fields.map((f: { required: boolean }) => f.required)).toEqual([true, false, false]);
    });
  }

  it('stops at SVC_QUERY_TIMEOUT_MS with 503 query_timeout on a large collection, and changes nothing', async () => {
    t = await createTestApp(dialect, { SVC_QUERY_TIMEOUT_MS: '1' });
    await t.collection('big', fields(false));
    // 40,000 records of ~2 KB that all hold the field: the check reads every one of them (on SQLite well past the
    // main connection's 20 ms budget, so it goes to a reader thread, where the 1 ms timeout stops it). Before, it
    // read and parsed them on the main thread, in 16 MB batches with no timeout, and answered 200.
    const now = t.ctx.clock.now();
    const pad = 'x'.repeat(2000);
    for (let n = 0; n < 40_000; n += 500) {
      await insertRecords(
        t.ctx.database.db,
        Array.from({ length: 500 }, (_, i) => ({ id: `rec_${String(n + i).padStart(26, '0')}`, collection: 'big', version: 1, data: { title: pad, points: 1, meta: {} }, createdAt: now, updatedAt: now })),
      );
    }
    const patched = await t.app.inject({ method: 'PATCH', url: '/admin/v1/collections/big', headers: t.admin.headers, payload: { fields: fields(true) } });
    expect(patched.statusCode).toBe(503);
    expect(patched.json()).toMatchObject({ code: 'query_timeout', status: 503 });
    expect(patched.headers['x-request-id']).toBeTruthy();
    const after = await t.app.inject({ method: 'GET', url: '/admin/v1/collections/big', headers: t.admin.headers });
    expect(after.json().fields.map((f: { required: boolean }) => f.required)).toEqual([true, false, false]);
    expect(t.violations).toEqual([]);
  }, 120_000);
});
