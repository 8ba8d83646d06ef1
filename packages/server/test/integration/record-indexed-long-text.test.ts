import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * PostgreSQL's B-tree takes an index entry of at most 2,704 bytes: a record with a longer value in an indexed text
 * field failed at its insert with 500 `internal` (create, PATCH, batch), and so did making a field indexed over such
 * a record. Now such a value is refused before anything is written, 422 at its field, and the index build is 409:
 * QueryDialect.indexedTextMaxBytes (2,600 bytes on PostgreSQL, no limit of its own on SQLite). Random text, which
 * PostgreSQL cannot compress into an entry.
 */
const randomText = (bytes: number): string => randomBytes(bytes).toString('base64').slice(0, bytes);

describe.each(DIALECTS)('long text in an indexed field (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('is written up to the limit and refused past it, 422 at its field, on every write path; unindexed fields take any length', async () => {
    t = await createTestApp(dialect);
    await t.app.inject({ method: 'POST', url: '/admin/v1/collections', headers: t.admin.headers, payload: { name: 'a', fields: [{ name: 's', type: 'text', indexed: true }, { name: 'plain', type: 'text' }] } });
    const auth = { authorization: `Bearer ${await t.token()}` };
    const create = (data: Record<string, unknown>) => t!.app.inject({ method: 'POST', url: '/api/v1/collections/a/records', headers: auth, payload: { data } });
    const limit = t.ctx.database.caps.query.indexedTextMaxBytes;
    expect(limit).toBe(dialect === 'postgres' ? 2600 : null);

    // At the limit: ASCII, and four-byte characters (U+1F600) as many as fit.
    const atLimit = await create({ s: randomText(2600) });
    expect(atLimit.statusCode, atLimit.body).toBe(201);
    expect((await create({ s: '😀'.repeat(650) })).statusCode).toBe(201);
    expect((await create({ s: 'x', plain: randomText(50_000) })).statusCode).toBe(201);

    const long = randomText(50_000);
    const created = await create({ s: long });
    const patched = await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/a/records/${atLimit.json().id}`, headers: auth, payload: { data: { s: long } } });
    const batch = await t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: auth, payload: { operations: [{ method: 'POST', collection: 'a', data: { s: 'short' } }, { method: 'POST', collection: 'a', data: { s: long } }] } });
    if (dialect === 'sqlite') {
      expect([created.statusCode, patched.statusCode, batch.statusCode]).toEqual([201, 200, 200]);
      return;
    }
    for (const res of [created, patched]) {
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/data/s', message: expect.stringContaining('2600 bytes') }] });
    }
    expect(batch.statusCode, batch.body).toBe(422);
    expect(batch.json().code).toBe('validation_failed');
    // Nothing of the refused writes landed: three records, the one at the limit unchanged.
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/collections/a/records?sort=s', headers: auth });
    expect(list.statusCode).toBe(200);
    const items = list.json().items as Array<{ id: string; data: { s: string } }>;
    expect(items).toHaveLength(3);
    expect(items.find((r) => r.id === atLimit.json().id)!.data.s).toBe(atLimit.json().data.s);
  });

  it('making a field indexed over a record holding a longer value is 409 on PostgreSQL, and leaves the field as it was', async () => {
    t = await createTestApp(dialect);
    await t.collection('b', [{ name: 's', type: 'text' }]);
    const auth = { authorization: `Bearer ${await t.token()}` };
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/collections/b/records', headers: auth, payload: { data: { s: randomText(50_000) } } });
    expect(created.statusCode).toBe(201);
    const indexed = await t.app.inject({ method: 'PATCH', url: '/admin/v1/collections/b', headers: t.admin.headers, payload: { fields: [{ name: 's', type: 'text', indexed: true }] } });
    const field = (await t.app.inject({ method: 'GET', url: '/admin/v1/collections/b', headers: t.admin.headers })).json().fields[0];
    if (dialect === 'sqlite') {
      expect(indexed.statusCode).toBe(200);
      expect(field.indexed).toBe(true);
      return;
    }
    expect(indexed.statusCode, indexed.body).toBe(409);
    expect(indexed.json()).toMatchObject({ code: 'conflict', detail: expect.stringContaining('"s"') });
    expect(field.indexed).toBe(false);
  });
});
