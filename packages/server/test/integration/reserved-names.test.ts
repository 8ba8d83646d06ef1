import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertCollection } from '../../src/records/collections-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/** SPEC Part II: the record's own member names and every built-in property name of JavaScript objects. */
const RESERVED = ['id', 'collection', 'version', 'createdAt', 'updatedAt', ...Object.getOwnPropertyNames(Object.prototype)];

describe.each(DIALECTS)('reserved field names (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  const admin = (method: string, url: string, payload?: object) => t.app.inject({ method: method as 'GET', url, headers: t.admin.headers, payload });

  beforeEach(async () => {
    t = await createTestApp(dialect);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterEach(async () => t.close());

  it.each(RESERVED)('a field named %s is refused when creating or patching a collection', async (name) => {
    const created = await admin('POST', '/admin/v1/collections', { name: 'things', fields: [{ name: 'title', type: 'text' }, { name, type: 'text', required: true }] });
    expect(created.statusCode, created.body).toBe(422);
    expect(created.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/fields/1/name' }] });
    expect((await admin('POST', '/admin/v1/collections', { name: 'things', fields: [{ name: 'title', type: 'text' }] })).statusCode).toBe(201);
    const patched = await admin('PATCH', '/admin/v1/collections/things', { fields: [{ name: 'title', type: 'text' }, { name, type: 'json' }] });
    expect(patched.statusCode, patched.body).toBe(422);
    expect(patched.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/fields/1/name' }] });
  });

  it('a __proto__ key in data is refused, never silently dropped', async () => {
    await t.collection('things', [{ name: 'title', type: 'text' }]);
    const create = await t.app.inject({
      method: 'POST',
      url: '/api/v1/collections/things/records',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"data":{"title":"a","__proto__":{"polluted":true}}}',
    });
    expect(create.statusCode).toBe(422);
    expect(create.json().errors).toEqual([{ path: '/data/__proto__', message: expect.any(String) }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  // Collections made before names were reserved keep their fields; the record code must still treat them as data.
  describe('a collection that already has such fields', () => {
    beforeEach(async () => {
      const fields = [
        { name: 'title', type: 'text' as const, required: false },
        { name: 'constructor', type: 'text' as const, required: true },
        { name: '__proto__', type: 'json' as const, required: false },
        { name: 'toString', type: 'text' as const, required: false },
      ];
      await insertCollection(t.ctx.database.db, { name: 'legacy', fields, createdAt: 1, updatedAt: 1 });
    });
    const url = '/api/v1/collections/legacy/records';

    it('enforces a required field named constructor', async () => {
      const res = await t.app.inject({ method: 'POST', url, headers: auth, payload: { data: { title: 'no constructor' } } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors).toEqual([{ path: '/data/constructor', message: 'is required' }]);
      const ok = await t.app.inject({ method: 'POST', url, headers: auth, payload: { data: { constructor: 'c', toString: 's' } } });
      expect(ok.statusCode, ok.body).toBe(201);
      expect(ok.json().data).toEqual({ constructor: 'c', toString: 's' });
    });

    it('a PATCH of __proto__ is validation_failed and makes no version and no event', async () => {
      const rec = (await t.app.inject({ method: 'POST', url, headers: auth, payload: { data: { constructor: 'c' } } })).json();
      const res = await t.app.inject({
        method: 'PATCH',
        url: `${url}/${rec.id}`,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: '{"data":{"__proto__":{"x":1}}}',
      });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/data/__proto__' }] });
      const now = (await t.app.inject({ method: 'GET', url: `${url}/${rec.id}`, headers: auth })).json();
      expect(now.version).toBe(1);
      const events = await t.ctx.database.db.selectFrom('events').select('topic').where('record_id', '=', rec.id).execute();
      expect(events.map((e) => e.topic)).toEqual(['record.created']);
    });

    it('clearing an absent toString changes nothing', async () => {
      const rec = (await t.app.inject({ method: 'POST', url, headers: auth, payload: { data: { constructor: 'c' } } })).json();
      const res = await t.app.inject({ method: 'PATCH', url: `${url}/${rec.id}`, headers: auth, payload: { data: { toString: null } } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().version).toBe(1);
    });

    it('making a field required finds the records that lack it, whatever its name', async () => {
      await t.app.inject({ method: 'POST', url, headers: auth, payload: { data: { constructor: 'c' } } });
      const fields = [
        { name: 'title', type: 'text', required: false },
        { name: 'constructor', type: 'text', required: true },
        { name: '__proto__', type: 'json', required: false },
        { name: 'toString', type: 'text', required: true },
      ];
      const res = await admin('PATCH', '/admin/v1/collections/legacy', { fields });
      expect(res.statusCode, res.body).toBe(409);
    });
  });
});
