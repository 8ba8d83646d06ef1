import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

const publicResolver = async () => [{ address: '93.184.216.34', family: 4 }];

describe.each(DIALECTS)('POST /api/v1/batch (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;

  beforeEach(async () => {
    t = await createTestApp(dialect, { SVC_BATCH_MAX_OPERATIONS: '60' }, { resolver: publicResolver as never });
    await t.collection('issues', [{ name: 'title', type: 'text', required: true }, { name: 'points', type: 'integer' }]);
    await t.collection('notes', [{ name: 'body', type: 'text' }]);
    auth = { authorization: `Bearer ${await t.token()}` };
    const hook = await t.app.inject({
      method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers,
      payload: { name: 'w', url: 'https://receiver.example/hook', topics: ['record.created', 'record.updated', 'record.deleted'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
  });
  afterEach(async () => t.close());

  const batch = (operations: unknown[], headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: { ...auth, ...headers }, payload: { operations } });
  const count = async (table: 'records' | 'events' | 'delivery_jobs') =>
    Number((await t.ctx.database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const create = async (collection: string, data: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/collections/${collection}/records`, headers: auth, payload: { data } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };

  it('runs creates, updates and deletes across collections, each with its event and job', async () => {
    const a = await create('issues', { title: 'a' });
    const b = await create('issues', { title: 'b' });
    const [events0, jobs0] = [await count('events'), await count('delivery_jobs')];
    const res = await batch([
      { method: 'POST', collection: 'notes', data: { body: 'n' } },
      { method: 'PATCH', collection: 'issues', id: a.id, data: { points: 3 }, ifMatch: 1 },
      { method: 'DELETE', collection: 'issues', id: b.id },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const { results } = res.json();
    expect(results).toHaveLength(3);
    expect(results[0]).toMatchObject({ status: 201, record: { collection: 'notes', version: 1, data: { body: 'n' } } });
    expect(results[1]).toMatchObject({ status: 200, record: { id: a.id, version: 2, data: { title: 'a', points: 3 } } });
    expect(results[2]).toEqual({ status: 204 });
    const events = await t.ctx.database.db.selectFrom('events').select(['topic', 'record_id']).orderBy('id').execute();
    expect(events.slice(events0).map((e) => [e.topic, e.record_id])).toEqual([
      ['record.created', results[0].record.id],
      ['record.updated', a.id],
      ['record.deleted', b.id],
    ]);
    expect(await count('delivery_jobs')).toBe(jobs0 + 3);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records/${b.id}`, headers: auth })).statusCode).toBe(404);
  });

  it('creates around an update keep the operations\' order in the feed, at consecutive positions', async () => {
    const a = await create('issues', { title: 'a' });
    const res = await batch([
      { method: 'POST', collection: 'issues', data: { title: 'b' } },
      { method: 'POST', collection: 'notes', data: { body: 'c' } },
      { method: 'PATCH', collection: 'issues', id: a.id, data: { points: 1 } },
      { method: 'POST', collection: 'issues', data: { title: 'd' } },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const ids = res.json().results.map((r: { record: { id: string } }) => r.record.id);
    expect(ids[2]).toBe(a.id);
    const feed = await t.ctx.database.db.selectFrom('events').select(['record_id', 'position']).orderBy('tx').orderBy('position').execute();
    expect(feed.slice(1).map((e) => e.record_id)).toEqual(ids);
    const positions = feed.map((e) => Number(e.position));
    expect(positions.slice(1)).toEqual([1, 2, 3, 4].map((k) => positions[0]! + k));
    const jobs = await t.ctx.database.db.selectFrom('delivery_jobs').innerJoin('events', 'events.id', 'delivery_jobs.event_id').select('events.record_id').execute();
    expect(jobs.map((j) => j.record_id).sort()).toEqual([a.id, ...ids].sort());
  });

  it('a failure at operation 57 of 60 leaves no record, event or job', async () => {
    const before = [await count('records'), await count('events'), await count('delivery_jobs')];
    const ops: unknown[] = Array.from({ length: 60 }, (_, i) => ({ method: 'POST', collection: 'issues', data: { title: `t${i}` } }));
    ops[57] = { method: 'PATCH', collection: 'issues', id: 'rec_00000000000000000000000000', data: { title: 'x' } };
    const res = await batch(ops);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toMatchObject({ code: 'not_found', errors: [{ path: '/operations/57' }] });
    expect([await count('records'), await count('events'), await count('delivery_jobs')]).toEqual(before);
  });

  it('a stale ifMatch fails the batch with 412 and undoes the operations before it', async () => {
    const a = await create('issues', { title: 'a' });
    const res = await batch([
      { method: 'POST', collection: 'issues', data: { title: 'new' } },
      { method: 'PATCH', collection: 'issues', id: a.id, data: { title: 'b' }, ifMatch: 1 },
      { method: 'DELETE', collection: 'issues', id: a.id, ifMatch: 1 },
    ]);
    expect(res.statusCode).toBe(412);
    expect(res.json()).toMatchObject({ code: 'precondition_failed', errors: [{ path: '/operations/2' }] });
    expect(await count('records')).toBe(1);
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records/${a.id}`, headers: auth });
    expect(got.json()).toMatchObject({ version: 1, data: { title: 'a' } });
  });

  it('validation errors point into the operation', async () => {
    const res = await batch([
      { method: 'POST', collection: 'issues', data: { title: 'ok' } },
      { method: 'POST', collection: 'issues', data: { points: 'many', extra: 1 } },
    ]);
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(body.code).toBe('validation_failed');
    expect(body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/operations/1/data/extra', '/operations/1/data/points', '/operations/1/data/title']);
    expect(await count('records')).toBe(0);
    const shape = await batch([{ method: 'DELETE', collection: 'issues', data: {} }]);
    expect(shape.statusCode).toBe(422);
    expect(shape.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['/operations/0/data', '/operations/0/id']);
    const method = await batch([{ method: 'PUT', collection: 'issues', data: {} }]);
    expect(method.statusCode).toBe(422);
    expect(method.json().errors.some((e: { path: string }) => e.path.startsWith('/operations/0'))).toBe(true);
  });

  it('refuses an empty batch and one over SVC_BATCH_MAX_OPERATIONS', async () => {
    expect((await batch([])).statusCode).toBe(422);
    const over = await batch(Array.from({ length: 61 }, () => ({ method: 'POST', collection: 'issues', data: { title: 'x' } })));
    expect(over.statusCode).toBe(422);
    expect(over.json().code).toBe('validation_failed');
    expect(await count('records')).toBe(0);
    const caps = await t.app.inject({ method: 'GET', url: '/api/v1/capabilities' });
    expect(caps.json().limits.batchMaxOperations).toBe(60);
    expect(caps.json().features).toContain('records.batch');
  });

  it('checks every operation against the token before anything runs', async () => {
    const limited = { authorization: `Bearer ${await t.token(['records:read', 'records:write'], ['issues'])}` };
    const ops = [
      { method: 'POST', collection: 'issues', data: { title: 'a' } },
      { method: 'POST', collection: 'notes', data: { body: 'n' } },
    ];
    const res = await batch(ops, limited);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'forbidden', errors: [{ path: '/operations/1' }] });
    // A collection that does not exist answers exactly like one the token may not use.
    const missing = await batch([{ method: 'POST', collection: 'nope', data: {} }], limited);
    expect(missing.statusCode).toBe(403);
    expect({ ...missing.json(), requestId: null }).toEqual({ ...res.json(), requestId: null, errors: [{ path: '/operations/0', message: res.json().errors[0].message }], detail: res.json().detail.replace('1', '0') });
    const readOnly = await batch(ops, { authorization: `Bearer ${await t.token(['records:read'])}` });
    expect(readOnly.statusCode).toBe(403);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/batch', payload: { operations: ops } })).statusCode).toBe(401);
    expect([await count('records'), await count('events')]).toEqual([0, 0]);
  });

  it('answers a write-only token without record data', async () => {
    const writeOnly = { authorization: `Bearer ${await t.token(['records:write'])}` };
    const res = await batch([{ method: 'POST', collection: 'issues', data: { title: 'secret' } }], writeOnly);
    expect(res.statusCode).toBe(200);
    const [result] = res.json().results;
    expect(result.status).toBe(201);
    expect(result.record.version).toBe(1);
    expect(result.record).not.toHaveProperty('data');
  });

  it('replays an Idempotency-Key and refuses it for another body', async () => {
    const ops = [{ method: 'POST', collection: 'issues', data: { title: 'once' } }];
    const first = await batch(ops, { 'idempotency-key': 'k1' });
    expect(first.statusCode).toBe(200);
    const again = await batch(ops, { 'idempotency-key': 'k1' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect([await count('records'), await count('events')]).toEqual([1, 1]);
    const other = await batch([{ method: 'POST', collection: 'issues', data: { title: 'twice' } }], { 'idempotency-key': 'k1' });
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('conflict');
  });
});
