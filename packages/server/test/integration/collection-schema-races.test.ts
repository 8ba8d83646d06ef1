import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import { findCollection } from '../../src/records/collections-store.js';
import { fieldIndexName } from '../../src/records/query/field-index-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * Two changes of one collection's schema run at once, in an order the test forces: the first is held at a point of
 * its course (before its index build, after its commit) until the second has answered. Whatever the answers, the
 * committed schema and the indexes must agree afterwards: a field said indexed has a valid index, and no other field
 * has one. Before, the loser of two PATCHes dropped the index the winner's schema named, and a PATCH's drop after its
 * commit took the index of a change committed after it.
 */
describe.each(DIALECTS)('concurrent changes of a collection’s schema (%s)', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(dialect);
  });
  afterEach(async () => t?.close());

  const admin = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: t.admin.headers, ...(payload === undefined ? {} : { payload }) });
  const patch = (fields: unknown) => admin('PATCH', '/admin/v1/collections/c', { fields });

  /** Holds the next call of `method` before it runs, or after it returned (a write: after its commit). */
  function holdNext(method: 'heavy' | 'write', at: 'before' | 'after'): { reached: Promise<void>; release: () => void } {
    const database = t.ctx.database as { -readonly [K in keyof Database]: Database[K] };
    const real = database[method].bind(database) as (...args: unknown[]) => Promise<unknown>;
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    let armed = true;
    database[method] = (async (...args: unknown[]) => {
      if (!armed) return real(...args);
      armed = false;
      if (at === 'before') {
        reach();
        await released;
        return real(...args);
      }
      const result = await real(...args);
      reach();
      await released;
      return result;
    }) as never;
    return { reached, release };
  }

  /** Each field of the committed schema, with whether the schema says it is indexed and whether a valid index exists. */
  async function agreement(name: string): Promise<Array<{ field: string; indexed: boolean; index: boolean }>> {
    const c = await findCollection(t.ctx.database.db, name);
    expect(c).not.toBeNull();
    const out = [];
    for (const f of c!.fields) {
      const state = (await t.ctx.database.caps.query.indexState(fieldIndexName(name, f.name)).execute(t.ctx.database.db)).rows[0];
      out.push({ field: f.name, indexed: f.indexed, index: state !== undefined && Boolean(state.valid) });
    }
    return out;
  }

  it('two PATCHes that both make a field indexed: the index the committed schema names is there', async () => {
    expect((await admin('POST', '/admin/v1/collections', { name: 'c', fields: [{ name: 'x', type: 'text' }] })).statusCode).toBe(201);
    const token = await t.token();
    const held = holdNext('heavy', 'before');
    const first = patch([{ name: 'x', type: 'text', indexed: true }]);
    await held.reached;
    // The change under way holds no lock that record writes take.
    const written = await t.app.inject({ method: 'POST', url: '/api/v1/collections/c/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { x: 'a' } } });
    expect(written.statusCode, written.body).toBe(201);
    const second = await patch([{ name: 'x', type: 'text', indexed: true }, { name: 'y', type: 'text' }]);
    held.release();
    const answers = [(await first).statusCode, second.statusCode].sort();
    expect(answers).toEqual([200, 409]);
    const fields = await agreement('c');
    expect(fields.find((f) => f.field === 'x')).toEqual({ field: 'x', indexed: true, index: true });
    for (const f of fields) expect(f.index, f.field).toBe(f.indexed);
  });

  it('a PATCH that un-indexes a field, and one that indexes it again after that commit: its drop keeps the other’s index', async () => {
    expect((await admin('POST', '/admin/v1/collections', { name: 'c', fields: [{ name: 'x', type: 'text', indexed: true }] })).statusCode).toBe(201);
    const held = holdNext('write', 'after');
    const first = patch([{ name: 'x', type: 'text', indexed: false }]);
    await held.reached;
    const second = await patch([{ name: 'x', type: 'text', indexed: true }]);
    held.release();
    expect((await first).statusCode).toBe(200);
    for (const f of await agreement('c')) expect(f.index, f.field).toBe(f.indexed);
    expect(second.statusCode).toBe(409);
    // Once the first is done, the second succeeds when tried again.
    expect((await patch([{ name: 'x', type: 'text', indexed: true }])).statusCode).toBe(200);
    expect(await agreement('c')).toEqual([{ field: 'x', indexed: true, index: true }]);
  });

  it('a collection made again while its deletion drops the old indexes keeps its own', async () => {
    expect((await admin('POST', '/admin/v1/collections', { name: 'c', fields: [{ name: 'x', type: 'text', indexed: true }] })).statusCode).toBe(201);
    const held = holdNext('write', 'after');
    const deleting = admin('DELETE', '/admin/v1/collections/c');
    await held.reached;
    const created = await admin('POST', '/admin/v1/collections', { name: 'c', fields: [{ name: 'x', type: 'text', indexed: true }] });
    held.release();
    expect((await deleting).statusCode).toBe(204);
    if (created.statusCode === 201) expect(await agreement('c')).toEqual([{ field: 'x', indexed: true, index: true }]);
    expect(created.statusCode).toBe(409);
    expect(await findCollection(t.ctx.database.db, 'c')).toBeNull();
    expect((await t.ctx.database.caps.query.indexState(fieldIndexName('c', 'x')).execute(t.ctx.database.db)).rows).toEqual([]);
  });
});
