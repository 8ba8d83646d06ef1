import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * The admin UI's record editor writes through /admin/v1/collections/{name}/records (issue 24): the public API's
 * semantics (validation at /data/<field>, If-Match, an event per change) behind the admin session and its CSRF token.
 */
describe.each(DIALECTS)('admin record writes (%s)', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());
  const admin = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: method as 'GET', url, headers: { ...t.admin.headers, ...headers }, payload: payload as object });

  it('creates, reads, updates with If-Match and deletes, each change an event of the feed', async () => {
    t = await createTestApp(dialect);
    await t.collection('notes', [{ name: 'title', type: 'text', required: true }, { name: 'n', type: 'integer' }]);
    const created = await admin('POST', '/admin/v1/collections/notes/records', { data: { title: 'a', n: 1 } });
    expect(created.statusCode).toBe(201);
    expect(created.headers.etag).toBe('"1"');
    const id = created.json().id;
    expect((await admin('GET', `/admin/v1/collections/notes/records/${id}`)).json()).toMatchObject({ id, version: 1, data: { title: 'a', n: 1 } });

    const invalid = await admin('POST', '/admin/v1/collections/notes/records', { data: { n: 'x' } });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['/data/n', '/data/title']);

    const updated = await admin('PATCH', `/admin/v1/collections/notes/records/${id}`, { data: { n: 2 } }, { 'if-match': '"1"' });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ version: 2, data: { title: 'a', n: 2 } });
    const stale = await admin('PATCH', `/admin/v1/collections/notes/records/${id}`, { data: { n: 3 } }, { 'if-match': '"1"' });
    expect(stale.statusCode).toBe(412);
    expect((await admin('DELETE', `/admin/v1/collections/notes/records/${id}`, undefined, { 'if-match': '"1"' })).statusCode).toBe(412);
    expect((await admin('DELETE', `/admin/v1/collections/notes/records/${id}`, undefined, { 'if-match': '"2"' })).statusCode).toBe(204);
    expect((await admin('GET', `/admin/v1/collections/notes/records/${id}`)).statusCode).toBe(404);

    const feed = (await admin('GET', '/admin/v1/events?limit=10')).json();
    expect(feed.items.filter((e: { recordId: string }) => e.recordId === id).map((e: { topic: string }) => e.topic)).toEqual(['record.created', 'record.updated', 'record.deleted']);
  });

  it('needs the session and its CSRF token; an unknown collection or record is 404', async () => {
    t = await createTestApp(dialect);
    await t.collection('notes', [{ name: 'title', type: 'text' }]);
    const { 'x-svc-csrf': _csrf, ...cookieOnly } = t.admin.headers as Record<string, string>;
    const noCsrf = await t.app.inject({ method: 'POST', url: '/admin/v1/collections/notes/records', headers: cookieOnly, payload: { data: { title: 'x' } } });
    expect(noCsrf.statusCode).toBe(403);
    const noSession = await t.app.inject({ method: 'POST', url: '/admin/v1/collections/notes/records', payload: { data: { title: 'x' } } });
    expect(noSession.statusCode).toBe(401);
    expect((await admin('POST', '/admin/v1/collections/nothing/records', { data: {} })).statusCode).toBe(404);
    expect((await admin('PATCH', '/admin/v1/collections/notes/records/rec_0000000000000000000000', { data: { title: 'x' } })).statusCode).toBe(404);
  });
});
