import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

const publicResolver = async () => [{ address: '93.184.216.34', family: 4 }];
const URL = 'https://receiver.example/hook';
const ALL = ['record.created', 'record.updated', 'record.deleted'];

/** SPEC §9: what a target receives — collections, changedFields, ordering (filter is stored and checked for shape). */
describe.each(DIALECTS)('webhook subscriptions (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;

  beforeEach(async () => {
    t = await createTestApp(dialect, {}, { resolver: publicResolver as never });
    await t.collection('issues', [{ name: 'title', type: 'text' }, { name: 'status', type: 'text' }, { name: 'meta', type: 'json' }]);
    await t.collection('notes', [{ name: 'body', type: 'text' }]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterEach(async () => t.close());

  const admin = (method: string, url: string, payload?: unknown) => t.app.inject({ method: method as 'POST', url, headers: t.admin.headers, payload: payload as object });
  const target = async (extra: Record<string, unknown>) => {
    const res = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, ...extra });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string };
  };
  const write = async (method: string, url: string, data?: unknown) => {
    const res = await t.app.inject({ method: method as 'POST', url, headers: auth, payload: data === undefined ? undefined : { data } });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.statusCode === 204 ? null : res.json();
  };
  const jobsOf = async (webhookId: string) =>
    (await t.ctx.database.db.selectFrom('delivery_jobs').select(['topic', 'collection']).where('webhook_id', '=', webhookId).orderBy('id').execute()).map((j) => `${j.topic} ${j.collection}`);

  it('shows every subscription field on every answer, null (or none) when unset', async () => {
    const plain = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL });
    expect(plain.json()).toMatchObject({ collections: null, filter: null, changedFields: null, ordering: 'none' });
    const full = await target({ collections: ['issues', 'issues'], changedFields: ['status'], ordering: 'record', filter: "status = 'open'" });
    expect(full).toMatchObject({ collections: ['issues'], changedFields: ['status'], ordering: 'record', filter: "status = 'open'" });
    const got = await admin('GET', `/admin/v1/webhooks/${full.id}`);
    expect(got.json()).toMatchObject({ collections: ['issues'], changedFields: ['status'], ordering: 'record', filter: "status = 'open'" });
    const listed = (await admin('GET', '/admin/v1/webhooks')).json().items;
    expect(listed.map((w: { ordering: string }) => w.ordering).sort()).toEqual(['none', 'record']);
    const patched = await admin('PATCH', `/admin/v1/webhooks/${full.id}`, { filter: null, collections: null, changedFields: null, ordering: 'none' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ collections: null, filter: null, changedFields: null, ordering: 'none' });
    expect((await admin('GET', `/admin/v1/webhooks/${full.id}`)).json()).toMatchObject({ collections: null, filter: null, changedFields: null, ordering: 'none' });
  });

  it('refuses a filter without collections (path /filter), also when a PATCH would leave it so', async () => {
    const bare = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, filter: "title = 'x'" });
    expect(bare.statusCode).toBe(422);
    expect(bare.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/filter' }] });
    const ok = await target({ collections: ['issues'], filter: "title = 'x'" });
    const cleared = await admin('PATCH', `/admin/v1/webhooks/${ok.id}`, { collections: null });
    expect(cleared.statusCode).toBe(422);
    expect(cleared.json().errors[0].path).toBe('/filter');
    // Too long: the rule the value broke, not the union's "is not one of the accepted values" (a string or null).
    const long = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, collections: ['issues'], filter: `title = '${'x'.repeat(50_000)}'` });
    expect(long.statusCode).toBe(422);
    expect(long.json().errors).toEqual([{ path: '/filter', message: 'must NOT have more than 2048 characters' }]);
    const badOrdering = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, ordering: 'global' });
    expect(badOrdering.statusCode).toBe(422);
    expect(badOrdering.json().errors).toEqual([{ path: '/ordering', message: expect.stringMatching(/^must be one of|is not one of/) }]);
    const badCollection = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, collections: ['Not A Name'] });
    expect(badCollection.statusCode).toBe(422);
  });

  it('makes jobs only for targets whose collections and changed fields match; the others get no row', async () => {
    const issuesOnly = await target({ collections: ['issues'] });
    const statusWatch = await target({ changedFields: ['status', 'meta'] });
    const everything = await target({});
    const issue = await write('POST', '/api/v1/collections/issues/records', { title: 'a', status: 'open', meta: { k: [1] } });
    const note = await write('POST', '/api/v1/collections/notes/records', { body: 'n' });
    await write('PATCH', `/api/v1/collections/issues/records/${issue.id}`, { title: 'b' });
    await write('PATCH', `/api/v1/collections/issues/records/${issue.id}`, { meta: { k: [1] } }); // no change: no event at all
    await write('PATCH', `/api/v1/collections/issues/records/${issue.id}`, { meta: { k: [2] } });
    await write('PATCH', `/api/v1/collections/issues/records/${issue.id}`, { status: null });
    await write('PATCH', `/api/v1/collections/notes/records/${note.id}`, { body: 'm' });
    await write('DELETE', `/api/v1/collections/notes/records/${note.id}`);
    expect(await jobsOf(issuesOnly.id)).toEqual([
      'record.created issues', 'record.updated issues', 'record.updated issues', 'record.updated issues',
    ]);
    expect(await jobsOf(statusWatch.id)).toEqual([
      'record.created issues', 'record.created notes', 'record.updated issues', 'record.updated issues', 'record.deleted notes',
    ]);
    expect(await jobsOf(everything.id)).toHaveLength(7);
    // The feed has every event, whoever receives it.
    expect(Number((await t.ctx.database.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBe(7);
  });

  it('never narrows a webhook.test', async () => {
    const narrow = await target({ collections: ['notes'], changedFields: ['body'], ordering: 'record' });
    const first = await admin('POST', `/admin/v1/webhooks/${narrow.id}/test`);
    const second = await admin('POST', `/admin/v1/webhooks/${narrow.id}/test`);
    expect([first.statusCode, second.statusCode]).toEqual([202, 202]);
    expect(await jobsOf(narrow.id)).toEqual(['webhook.test _test', 'webhook.test _test']);
    const states = await t.ctx.database.db.selectFrom('delivery_jobs').select('state').where('webhook_id', '=', narrow.id).execute();
    expect(states.map((s) => s.state)).toEqual(['pending', 'pending']);
  });

  it('ordering record: a record\'s later jobs wait held, others\' do not; switching ordering off releases them', async () => {
    const ordered = await target({ ordering: 'record' });
    const a = await write('POST', '/api/v1/collections/issues/records', { title: 'a' });
    const b = await write('POST', '/api/v1/collections/issues/records', { title: 'b' });
    await write('PATCH', `/api/v1/collections/issues/records/${a.id}`, { title: 'a2' });
    await write('PATCH', `/api/v1/collections/issues/records/${a.id}`, { title: 'a3' });
    const states = async () =>
      (await t.ctx.database.db.selectFrom('delivery_jobs').select(['record_id', 'state']).where('webhook_id', '=', ordered.id).orderBy('id').execute()).map((j) => `${j.record_id === a.id ? 'a' : 'b'} ${j.state}`);
    expect(await states()).toEqual(['a pending', 'b pending', 'a held', 'a held']);
    // The admin API shows a held job as pending (SPEC §4's four states), and lists it under state=pending.
    const listed = (await admin('GET', `/admin/v1/deliveries?webhookId=${ordered.id}&state=pending`)).json().items;
    expect(listed).toHaveLength(4);
    expect(new Set(listed.map((j: { state: string }) => j.state))).toEqual(new Set(['pending']));
    expect((await admin('PATCH', `/admin/v1/webhooks/${ordered.id}`, { ordering: 'none' })).statusCode).toBe(200);
    expect(await states()).toEqual(['a pending', 'b pending', 'a pending', 'a pending']);
    void b;
  });

  it('checks a filter against every collection it names at save: validation_failed at /filter with the position', async () => {
    const unknownField = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, collections: ['issues'], filter: "title = 'x' && nope = 1" });
    expect(unknownField.statusCode).toBe(422);
    expect(unknownField.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/filter', position: 15 }] });
    expect(unknownField.json().errors[0].message).toContain('position 15');
    // `body` exists in notes, not in issues: the filter must hold in each named collection.
    const oneOfTwo = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, collections: ['notes', 'issues'], filter: "body ~ 'x'" });
    expect(oneOfTwo.statusCode).toBe(422);
    expect(oneOfTwo.json().errors[0].message).toContain('issues');
    const syntax = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, collections: ['issues'], filter: "status = 'open' &&" });
    expect(syntax.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/filter', position: 18 }] });
    const noSuch = await admin('POST', '/admin/v1/webhooks', { name: 'w', url: URL, topics: ALL, collections: ['missing'], filter: "x = 1" });
    expect(noSuch.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/filter' }] });
    const ok = await target({ collections: ['issues'], filter: "status = 'open'" });
    const badPatch = await admin('PATCH', `/admin/v1/webhooks/${ok.id}`, { filter: 'status > true' });
    expect(badPatch.statusCode).toBe(422);
    expect(badPatch.json().errors[0].path).toBe('/filter');
    // Widening the collections re-checks the stored filter against the new one.
    const widened = await admin('PATCH', `/admin/v1/webhooks/${ok.id}`, { collections: ['issues', 'notes'] });
    expect(widened.statusCode).toBe(422);
  });

  it('a filter decides job creation: created and deleted by their record, updated by record or previous state', async () => {
    const open = await target({ collections: ['issues'], filter: "status = 'open'" });
    const notOpen = await target({ collections: ['issues'], filter: "!(status = 'open')" });
    const a = await write('POST', '/api/v1/collections/issues/records', { title: 'a', status: 'open' });
    const b = await write('POST', '/api/v1/collections/issues/records', { title: 'b', status: 'closed' });
    const c = await write('POST', '/api/v1/collections/issues/records', { title: 'c' });
    await write('PATCH', `/api/v1/collections/issues/records/${a.id}`, { status: 'closed' }); // leaves the set: both
    await write('PATCH', `/api/v1/collections/issues/records/${b.id}`, { title: 'b2' }); // never open
    await write('PATCH', `/api/v1/collections/issues/records/${c.id}`, { status: 'OPEN' }); // case matters for =
    await write('DELETE', `/api/v1/collections/issues/records/${a.id}`); // last state closed
    const recordsOf = async (webhookId: string) =>
      (await t.ctx.database.db.selectFrom('delivery_jobs').select(['topic', 'record_id']).where('webhook_id', '=', webhookId).orderBy('id').execute()).map(
        (j) => `${j.topic} ${j.record_id === a.id ? 'a' : j.record_id === b.id ? 'b' : 'c'}`,
      );
    expect(await recordsOf(open.id)).toEqual(['record.created a', 'record.updated a']);
    expect(await recordsOf(notOpen.id)).toEqual([
      'record.created b', 'record.created c', 'record.updated a', 'record.updated b', 'record.updated c', 'record.deleted a',
    ]);
    // The list query with the same filter agrees on what is in the set now.
    const listed = (await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records?filter=${encodeURIComponent("!(status = 'open')")}`, headers: auth })).json();
    expect(listed.items.map((r: { id: string }) => r.id).sort()).toEqual([b.id, c.id].sort());
  });

  it('filter and changedFields together: an update whose watched field did not change gets no job', async () => {
    const watch = await target({ collections: ['issues'], filter: "title ~ 'bug'", changedFields: ['status'] });
    const r = await write('POST', '/api/v1/collections/issues/records', { title: 'A BUG here', status: 'open' });
    await write('PATCH', `/api/v1/collections/issues/records/${r.id}`, { title: 'a bug, renamed' });
    await write('PATCH', `/api/v1/collections/issues/records/${r.id}`, { status: 'closed' });
    const other = await write('POST', '/api/v1/collections/issues/records', { title: 'feature', status: 'open' });
    await write('PATCH', `/api/v1/collections/issues/records/${other.id}`, { status: 'closed' });
    expect(await jobsOf(watch.id)).toEqual(['record.created issues', 'record.updated issues']);
  });

  it('batch writes are judged like single ones', async () => {
    const open = await target({ collections: ['issues'], filter: "status = 'open'" });
    const res = await t.app.inject({
      method: 'POST', url: '/api/v1/batch', headers: auth,
      payload: { operations: [
        { method: 'POST', collection: 'issues', data: { title: 'x', status: 'open' } },
        { method: 'POST', collection: 'issues', data: { title: 'y', status: 'closed' } },
        { method: 'POST', collection: 'notes', data: { body: 'z' } },
      ] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await jobsOf(open.id)).toEqual(['record.created issues']);
  });
});
