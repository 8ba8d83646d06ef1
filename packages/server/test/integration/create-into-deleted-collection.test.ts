import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../src/auth/setup.js';
import type { Database } from '../../src/db/dialects/types.js';
import type { Tables } from '../../src/db/tables.js';
import { DIALECTS } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A record create whose collection is deleted after the request looked it up and before its insert. The review's
 * case: on PostgreSQL, a client creating records while an admin deleted the collection (`?force=true`, 200,000
 * records) got 500 `internal` (the records' foreign key refused the insert) where a missing collection is 403 on the
 * public API and 404 on the admin's. Here the deletion is made to land in that gap: the write path deletes the
 * collection's row just before it runs the create.
 */
const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';

describe.each(DIALECTS)('a create into a collection deleted meanwhile (%s)', (dialect) => {
  let svc: TestServer | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  async function start() {
    svc = await startTestServer({ dialect, worker: false });
    await createAdmin(svc.ctx, EMAIL, PASSWORD);
    const login = await fetch(`${svc.baseUrl}/admin/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
    const admin = { cookie: login.headers.get('set-cookie')!.split(';')[0]!, 'x-svc-csrf': ((await login.json()) as { csrfToken: string }).csrfToken, 'content-type': 'application/json' };
    const made = await fetch(`${svc.baseUrl}/admin/v1/collections`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'gone', fields: [{ name: 'title', type: 'text', required: false }] }) });
    expect(made.status).toBe(201);
    const token = (await (await fetch(`${svc.baseUrl}/admin/v1/tokens`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 't', scopes: ['records:read', 'records:write'], collections: null }) })).json()) as { token: string };
    const bearer = { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' };
    // The next write (a lone create's statement, or a transaction) first deletes the collection, as an admin's DELETE
    // committed just then would.
    const database = svc.ctx.database as { -readonly [K in keyof Database]: Database[K] };
    const { db } = database;
    const deleteFirst = <F extends (work: (trx: Kysely<Tables>) => Promise<unknown>) => Promise<unknown>>(original: F): F =>
      (async (work: (trx: Kysely<Tables>) => Promise<unknown>) => {
        await sql`delete from collections where name = 'gone'`.execute(db);
        return original(work);
      }) as F;
    const arm = () => {
      database.writeStatement = deleteFirst(database.writeStatement.bind(database)) as Database['writeStatement'];
      database.write = deleteFirst(database.write.bind(database)) as Database['write'];
    };
    return { base: svc.baseUrl, admin, bearer, arm };
  }

  it('POST /api/v1/collections/{c}/records answers 403 forbidden, as for a missing collection', async () => {
    const { base, bearer, arm } = await start();
    arm();
    const res = await fetch(`${base}/api/v1/collections/gone/records`, { method: 'POST', headers: bearer, body: JSON.stringify({ data: { title: 'x' } }) });
    const body = (await res.json()) as { code: string; detail: string };
    expect({ status: res.status, code: body.code, detail: body.detail }).toEqual({ status: 403, code: 'forbidden', detail: 'This token may not use this collection.' });
  });

  it('with an Idempotency-Key too', async () => {
    const { base, bearer, arm } = await start();
    arm();
    const res = await fetch(`${base}/api/v1/collections/gone/records`, { method: 'POST', headers: { ...bearer, 'idempotency-key': 'k1' }, body: JSON.stringify({ data: { title: 'x' } }) });
    expect(res.status).toBe(403);
  });

  it('POST /api/v1/batch answers 403 forbidden at the operation that creates into it', async () => {
    const { base, bearer, arm } = await start();
    arm();
    const res = await fetch(`${base}/api/v1/batch`, { method: 'POST', headers: bearer, body: JSON.stringify({ operations: [{ method: 'POST', collection: 'gone', data: { title: 'a' } }, { method: 'POST', collection: 'gone', data: { title: 'b' } }] }) });
    const body = (await res.json()) as { code: string; errors: Array<{ path: string }> };
    expect({ status: res.status, code: body.code, path: body.errors[0]!.path }).toEqual({ status: 403, code: 'forbidden', path: '/operations/0' });
  });

  it('POST /admin/v1/collections/{name}/records answers 404 not_found', async () => {
    const { base, admin, arm } = await start();
    arm();
    const res = await fetch(`${base}/admin/v1/collections/gone/records`, { method: 'POST', headers: admin, body: JSON.stringify({ data: { title: 'x' } }) });
    const body = (await res.json()) as { code: string };
    expect({ status: res.status, code: body.code }).toEqual({ status: 404, code: 'not_found' });
  });
});
