import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

describe.each(DIALECTS)('records (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;

  beforeEach(async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', [
      { name: 'title', type: 'text', required: true },
      { name: 'points', type: 'integer' },
      { name: 'done', type: 'boolean' },
      { name: 'due', type: 'datetime' },
      { name: 'meta', type: 'json' },
      { name: 'score', type: 'number' },
    ]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterEach(async () => t.close());

  const create = (data: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { ...auth, ...headers }, payload: { data } });

  it('creates, reads, updates and deletes a record', async () => {
    const created = await create({ title: 'First', points: 3, meta: { a: [1, 2] } });
    expect(created.statusCode).toBe(201);
    const rec = created.json();
    expect(rec).toMatchObject({ collection: 'issues', version: 1, data: { title: 'First', points: 3, meta: { a: [1, 2] } } });
    expect(rec.id).toMatch(/^rec_[0-9A-Z]{26}$/);
    expect(new Date(rec.createdAt).toISOString()).toBe(rec.createdAt);
    expect(created.headers.etag).toBe('"1"');

    const got = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records/${rec.id}`, headers: auth });
    expect(got.statusCode).toBe(200);
    expect(got.headers.etag).toBe('"1"');
    expect(got.json()).toEqual(rec);

    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/collections/issues/records/${rec.id}`,
      headers: { ...auth, 'if-match': '"1"' },
      payload: { data: { points: null, done: true } },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ version: 2, data: { title: 'First', done: true } });
    expect(patched.json().data).not.toHaveProperty('points');

    const stale = await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${rec.id}`, headers: { ...auth, 'if-match': '"1"' }, payload: { data: { title: 'x' } } });
    expect(stale.statusCode).toBe(412);
    expect(stale.json().code).toBe('precondition_failed');
    const malformed = await t.app.inject({ method: 'DELETE', url: `/api/v1/collections/issues/records/${rec.id}`, headers: { ...auth, 'if-match': 'two' } });
    expect(malformed.statusCode).toBe(412);

    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/collections/issues/records/${rec.id}`, headers: { ...auth, 'if-match': '"2"' } });
    expect(del.statusCode).toBe(204);
    const gone = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records/${rec.id}`, headers: auth });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().code).toBe('not_found');
  });

  it('a PATCH that changes nothing keeps the version and makes no event', async () => {
    const rec = (await create({ title: 'Same', points: 1 })).json();
    const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${rec.id}`, headers: auth, payload: { data: { title: 'Same', points: 1 } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().version).toBe(1);
    const events = await t.ctx.database.db.selectFrom('events').select('topic').where('record_id', '=', rec.id).execute();
    expect(events.map((e) => e.topic)).toEqual(['record.created']);
  });

  it('validates data against the fields, one error per fault', async () => {
    const res = await create({ points: 1.5, done: 'yes', due: '2026-02-31T00:00:00Z', score: 'x', extra: 1 });
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(body.code).toBe('validation_failed');
    const paths = body.errors.map((e: { path: string }) => e.path).sort();
    expect(paths).toEqual(['/data/done', '/data/due', '/data/extra', '/data/points', '/data/score', '/data/title']);
    const count = await t.ctx.database.db.selectFrom('records').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('refuses unknown body fields and a non-object data', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: auth, payload: { data: { title: 'a' }, id: 'rec_x' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ path: '/id', message: 'is not an accepted field' }]);
    const arr = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: auth, payload: { data: [1] } });
    expect(arr.statusCode).toBe(422);
  });

  it('lists in creation order with limit and an opaque cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await create({ title: `r${i}` })).json().id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `limit=3&cursor=${cursor}` : 'limit=3';
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records?${q}`, headers: auth });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      seen.push(...body.items.map((r: { id: string }) => r.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
    const def = await t.app.inject({ method: 'GET', url: '/api/v1/collections/issues/records', headers: auth });
    expect(def.json().items).toHaveLength(7);
    expect(def.json().nextCursor).toBeNull();
  });

  it.each(['0', '501', '1.5', 'abc', '-1'])('limit=%s is invalid_query', async (limit) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records?limit=${limit}`, headers: auth });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ path: 'limit' }] });
  });

  it.each(['garbage', 'eyJhZnRlciI6MX0', Buffer.from('{"after":"rec_\' or 1=1"}').toString('base64url')])('a forged cursor %s is invalid_query', async (cursor) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records?cursor=${cursor}`, headers: auth });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ path: 'cursor' }] });
  });

  it('Idempotency-Key returns the first result, and conflicts on a different body', async () => {
    const a = await create({ title: 'once' }, { 'idempotency-key': 'k-1' });
    const b = await create({ title: 'once' }, { 'idempotency-key': 'k-1' });
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.json()).toEqual(a.json());
    expect(b.headers['idempotent-replayed']).toBe('true');
    const c = await create({ title: 'other' }, { 'idempotency-key': 'k-1' });
    expect(c.statusCode).toBe(409);
    expect(c.json().code).toBe('conflict');
    const rows = await t.ctx.database.db.selectFrom('records').select('id').execute();
    expect(rows).toHaveLength(1);
    // Scoped to the token: another token may use the same key for its own record.
    const other = { authorization: `Bearer ${await t.token()}` };
    const d = await create({ title: 'once' }, { ...other, 'idempotency-key': 'k-1' });
    expect(d.statusCode).toBe(201);
    expect(d.json().id).not.toBe(a.json().id);
  });

  it('concurrent creates with one Idempotency-Key make one record', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => create({ title: 'race' }, { 'idempotency-key': 'same' })));
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    expect(new Set(results.map((r) => r.json().id)).size).toBe(1);
  });

  it('a token without records:read gets write answers without data, documented as optional', async () => {
    const writer = { authorization: `Bearer ${await t.token(['records:write'])}` };
    const secret = (await create({ title: 'secret', points: 7 })).json();
    const patched = await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${secret.id}`, headers: writer, payload: { data: {} } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toEqual({ id: secret.id, collection: 'issues', version: 1, createdAt: secret.createdAt, updatedAt: secret.updatedAt });
    const changed = await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${secret.id}`, headers: writer, payload: { data: { done: true } } });
    expect(changed.json()).toMatchObject({ version: 2 });
    expect(changed.json()).not.toHaveProperty('data');
    for (const key of [undefined, 'w-1', 'w-1']) {
      const created = await create({ title: 'new' }, { ...writer, ...(key ? { 'idempotency-key': key } : {}) });
      expect(created.statusCode).toBe(201);
      expect(created.json()).not.toHaveProperty('data');
      expect(created.body).not.toContain('new');
    }
    // A token that may read still gets the record whole.
    expect((await create({ title: 'seen' })).json().data).toEqual({ title: 'seen' });

    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const item = doc.paths['/api/v1/collections/{collection}/records/{id}'];
    for (const answer of [doc.paths['/api/v1/collections/{collection}/records'].post.responses['201'], item.patch.responses['200']]) {
      const ref = answer.content['application/json'].schema.$ref as string;
      const schema = doc.components.schemas[ref.split('/').pop()!];
      expect(schema.properties).toHaveProperty('data');
      expect(schema.required).not.toContain('data');
    }
  });

  it('never shows a record through another collection', async () => {
    await t.collection('secrets', [{ name: 'title', type: 'text' }]);
    const rec = (await create({ title: 'mine' })).json();
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/secrets/records/${rec.id}`, headers: auth });
    expect(res.statusCode).toBe(404);
    const scoped = { authorization: `Bearer ${await t.token(['records:read'], ['secrets'])}` };
    const denied = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records/${rec.id}`, headers: scoped });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('forbidden');
  });
});
