import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildFieldIndex, fieldIndexName } from '../../src/records/query/field-index-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * Index names are derived from collection and field, so what a killed process leaves behind is found again by name:
 * an index built for a PATCH whose schema never committed (PostgreSQL even finishes a concurrent build whose client
 * was killed -9), an index a forced delete committed before dropping, an invalid one of a failed concurrent build.
 * Each leftover is made here as the killed process left it, then the collection is used as a client would.
 */
describe.each(DIALECTS)('leftover field indexes (%s)', (dialect) => {
  let t: TestApp;
  let token: string;
  beforeEach(async () => {
    t = await createTestApp(dialect);
    token = await t.token();
  });
  afterEach(async () => t?.close());

  const admin = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: t.admin.headers, ...(payload === undefined ? {} : { payload }) });
  const create = (collection: string, data: unknown) =>
    t.app.inject({ method: 'POST', url: `/api/v1/collections/${collection}/records`, headers: { authorization: `Bearer ${token}` }, payload: { data } });
  // What the killed PATCH left: the index of `x` as another type's expression, with no schema naming it.
  const leftover = (collection: string, type: 'number' | 'datetime') =>
    buildFieldIndex(t.ctx.database.db, t.ctx.database.caps.query, collection, { name: 'x', type, required: false, indexed: true });
  const definition = async (collection: string, field: string): Promise<string | null> => {
    const name = fieldIndexName(collection, field);
    const rows =
      dialect === 'postgres'
        ? (await sql<{ def: string }>`select indexdef as def from pg_indexes where indexname = ${name}`.execute(t.ctx.database.db)).rows
        : (await sql<{ def: string }>`select sql as def from sqlite_master where type = 'index' and name = ${name}`.execute(t.ctx.database.db)).rows;
    return rows[0]?.def ?? null;
  };
  // Another type's expression: PostgreSQL casts to numeric (which fails on text), SQLite applies svc_instant.
  const otherType = dialect === 'postgres' ? 'number' : 'datetime';
  const foreign = dialect === 'postgres' ? /numeric/ : /svc_instant/;

  it('a collection made again under a deleted one’s name does not inherit its leftover index', async () => {
    expect((await admin('POST', '/admin/v1/collections', { name: 'c', fields: [{ name: 'x', type: otherType }, { name: 'y', type: 'text' }] })).statusCode).toBe(201);
    expect((await create('c', { x: dialect === 'postgres' ? 5 : '2026-01-01T00:00:00Z', y: 'a' })).statusCode).toBe(201);
    await leftover('c', otherType);
    expect((await admin('DELETE', '/admin/v1/collections/c?force=true')).statusCode).toBe(204);

    expect((await admin('POST', '/admin/v1/collections', { name: 'c', fields: [{ name: 'x', type: 'text' }] })).statusCode).toBe(201);
    expect(await definition('c', 'x')).toBeNull();
    const written = await create('c', { x: 'hello' });
    expect(written.statusCode, written.body).toBe(201);

    // Made indexed again, the index is the text field's, not the leftover kept by `if not exists`.
    const patched = await admin('PATCH', '/admin/v1/collections/c', { fields: [{ name: 'x', type: 'text', indexed: true }] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(await definition('c', 'x')).not.toMatch(foreign);
  });

  it('a field added by PATCH does not inherit a leftover index of its name', async () => {
    expect((await admin('POST', '/admin/v1/collections', { name: 'd', fields: [{ name: 'y', type: 'text' }] })).statusCode).toBe(201);
    await leftover('d', otherType);
    const patched = await admin('PATCH', '/admin/v1/collections/d', { fields: [{ name: 'y', type: 'text' }, { name: 'x', type: 'text' }] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(await definition('d', 'x')).toBeNull();
    const written = await create('d', { x: 'hello', y: 'b' });
    expect(written.statusCode, written.body).toBe(201);
  });

  it.runIf(dialect === 'postgres')('an invalid index left by a failed concurrent build does not fail the next PATCH', async () => {
    expect((await admin('POST', '/admin/v1/collections', { name: 'e', fields: [{ name: 'x', type: 'text' }] })).statusCode).toBe(201);
    expect((await create('e', { x: 'not a number' })).statusCode).toBe(201);
    const index = fieldIndexName('e', 'x');
    // A concurrent build that fails leaves its index behind, invalid (as one whose server was stopped does).
    await expect(sql.raw(`create index concurrently "${index}" on records (((data::jsonb ->> 'x')::numeric)) where collection = 'e'`).execute(t.ctx.database.db)).rejects.toThrow();
    expect((await t.ctx.database.caps.query.indexState(index).execute(t.ctx.database.db)).rows).toEqual([{ valid: false }]);

    const patched = await admin('PATCH', '/admin/v1/collections/e', { fields: [{ name: 'x', type: 'text', indexed: true }] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await t.ctx.database.caps.query.indexState(index).execute(t.ctx.database.db)).rows).toEqual([{ valid: true }]);
    expect(await definition('e', 'x')).not.toMatch(foreign);
    expect((await create('e', { x: 'still text' })).statusCode).toBe(201);
  });
});
