import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminClient, SvcApiError, type SvcAdminClient } from '../src/client/admin.js';
import { freePort, startTestServer, type TestServer } from '../../server/test/helpers/server.js';
import { DIALECTS, recordingFetch } from './helpers/client-server.js';
import { ensureClientBuilt } from './helpers/sdk-build.js';
import { jsonLines, runExample as runScript } from './helpers/example-script.js';
import type { Dialect } from '../../server/test/helpers/db.js';

type Scope = 'admin:read' | 'admin:webhooks' | 'admin:collections' | 'admin:tokens';

interface AdminTestServer {
  server: TestServer;
  baseUrl: string;
  /** A receiver address that refuses connections: every attempt fails at once, on loopback. */
  deadUrl: string;
  /** Mints an admin token with these scopes through the session, as the admin UI does. */
  adminToken(...scopes: Scope[]): Promise<string>;
}

/**
 * svc with a worker on a fresh database: one attempt per job (schedule `0s`), so a job to `deadUrl` is dead after its
 * first attempt; 127.0.0.0/8 allowed as a destination (the guard refuses loopback otherwise).
 */
async function startAdminTestServer(dialect: Dialect): Promise<AdminTestServer> {
  const server = await startTestServer({
    dialect,
    env: { SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_RETRY_SCHEDULE: '0s' },
  });
  const { baseUrl } = server;
  const json = { 'content-type': 'application/json' };
  const credentials = { email: 'owner@example.com', password: 'a long enough password' };
  const setup = await fetch(`${baseUrl}/admin/v1/setup`, { method: 'POST', headers: json, body: JSON.stringify({ token: server.setupToken, ...credentials }) });
  expect(setup.status).toBe(201);
  const login = await fetch(`${baseUrl}/admin/v1/session`, { method: 'POST', headers: json, body: JSON.stringify(credentials) });
  expect(login.status).toBe(200);
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('svc_admin='))!.split(';')[0]!;
  const { csrfToken } = (await login.json()) as { csrfToken: string };
  return {
    server,
    baseUrl,
    deadUrl: `https://127.0.0.1:${await freePort()}/hook`,
    adminToken: async (...scopes) => {
      const created = await fetch(`${baseUrl}/admin/v1/admin-tokens`, {
        method: 'POST',
        headers: { ...json, cookie, 'x-svc-csrf': csrfToken },
        body: JSON.stringify({ name: scopes.join(' '), scopes }),
      });
      expect(created.status).toBe(201);
      return ((await created.json()) as { token: string }).token;
    },
  };
}

/** The rejection of `promise`, which must be an SvcApiError. */
async function apiError(promise: Promise<unknown>): Promise<SvcApiError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SvcApiError);
  return error as SvcApiError;
}

// A worker attempt after a write: the poll is 200 ms, but a loaded two-core machine has taken seconds to run one.
const ATTEMPT_WAIT = { timeout: 20_000, interval: 100 };

describe.each(DIALECTS)('svc-sdk/admin against svc (%s)', (dialect) => {
  let s: AdminTestServer;
  let admin: SvcAdminClient;

  beforeAll(async () => {
    s = await startAdminTestServer(dialect);
    admin = createAdminClient({ baseUrl: s.baseUrl, token: await s.adminToken('admin:read', 'admin:collections', 'admin:webhooks') });
  }, 120_000);
  afterAll(async () => s?.server.close());

  it('collections: create, get, list, all, update, delete (refused while holding records, then forced)', async () => {
    const created = await admin.collections.create({ name: 'orders', fields: [{ name: 'total', type: 'number', required: true }] });
    expect(created.fields).toEqual([{ name: 'total', type: 'number', required: true, indexed: false }]);
    await admin.collections.create({ name: 'notes' });
    expect((await admin.collections.get('orders')).name).toBe('orders');

    const page = await admin.collections.list({ limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.nextCursor).toEqual(expect.any(String));
    const names: string[] = [];
    for await (const c of admin.collections.all({ pageSize: 1 })) names.push(c.name);
    expect(names.sort()).toEqual(['notes', 'orders']);

    const updated = await admin.collections.update('orders', {
      fields: [...created.fields, { name: 'status', type: 'text', indexed: true }],
    });
    expect(updated.fields.map((f) => [f.name, f.indexed])).toEqual([['total', false], ['status', true]]);

    // A record through the raw client (admin record writes are not wrapped), so that the delete has something to refuse.
    const { response } = await admin.api.POST('/admin/v1/collections/{name}/records', {
      params: { path: { name: 'notes' } },
      body: { data: {} },
    });
    expect(response.status).toBe(201);
    expect((await apiError(admin.collections.delete('notes'))).code).toBe('conflict');
    await admin.collections.delete('notes', { force: true });
    const gone = await apiError(admin.collections.get('notes'));
    expect(gone).toMatchObject({ status: 404, code: 'not_found', requestId: expect.any(String) });
  });

  it('webhooks and deliveries: every method, on real jobs the worker made dead', async () => {
    await admin.collections.create({ name: 'sales', fields: [{ name: 'total', type: 'number', required: true }] });
    const target = await admin.webhooks.create({
      name: 'large orders',
      url: s.deadUrl,
      topics: ['record.created'],
      collections: ['sales'],
      filter: 'total >= 100',
    });
    expect(target.secret).toMatch(/^whsec_/);
    expect(target.filter).toBe('total >= 100');
    expect(await admin.webhooks.get(target.id)).toMatchObject({ id: target.id, name: 'large orders' });
    expect((await admin.webhooks.list()).items.map((t) => t.id)).toContain(target.id);

    const write = async (total: number) => {
      const { data, response } = await admin.api.POST('/admin/v1/collections/{name}/records', {
        params: { path: { name: 'sales' } },
        body: { data: { total } },
      });
      expect(response.status).toBe(201);
      return data!.id;
    };
    const big = await write(150);
    const small = await write(5);

    // The filter let one write through: one job, and the worker's single attempt makes it dead.
    await expect
      .poll(async () => (await admin.deliveries.list({ webhookId: target.id, state: 'dead' })).items.length, ATTEMPT_WAIT)
      .toBe(1);
    const [job] = (await admin.deliveries.list({ webhookId: target.id })).items;
    expect(job).toMatchObject({ recordId: big, state: 'dead', topic: 'record.created' });
    expect((await admin.deliveries.list({ recordId: small })).items).toEqual([]);
    expect((await admin.deliveries.list({ topics: ['record.updated'], since: new Date(Date.now() - 60_000) })).items).toEqual([]);
    const detail = await admin.deliveries.get(job!.id);
    expect(detail.attempts).toHaveLength(1);

    const retried = await admin.deliveries.retry(job!.id);
    expect(retried.state).toMatch(/^(pending|delivering)$/);
    await expect.poll(async () => (await admin.deliveries.get(job!.id)).state, ATTEMPT_WAIT).toBe('dead');
    const unknown = 'del_01JH0000000000000000000000';
    const bulk = await admin.deliveries.retryMany([job!.id, unknown]);
    expect(bulk).toEqual({ retried: 1, skipped: [{ id: unknown, reason: 'not_found' }] });
    await expect.poll(async () => (await admin.deliveries.get(job!.id)).state, ATTEMPT_WAIT).toBe('dead');

    const since = new Date(Date.now() - 10 * 60_000);
    expect(await admin.webhooks.recover(target.id, { since, until: new Date() })).toEqual({ jobs: 1 });
    await expect.poll(async () => (await admin.deliveries.get(job!.id)).state, ATTEMPT_WAIT).toBe('dead');

    // Without its filter the target matches the small order's event too, which has no job yet: replay makes one.
    const widened = await admin.webhooks.update(target.id, { filter: null });
    expect(widened).toMatchObject({ id: target.id, filter: null, collections: ['sales'] });
    const replayed = await admin.webhooks.replay(target.id, { since: since.toISOString() });
    expect(replayed.jobs).toBe(1);
    expect((await admin.deliveries.list({ recordId: small })).items).toHaveLength(1);

    const { deliveryId } = await admin.webhooks.test(target.id);
    expect((await admin.deliveries.get(deliveryId)).topic).toBe('webhook.test');

    await expect.poll(async () => (await admin.webhooks.stats(target.id)).attempts.total, ATTEMPT_WAIT).toBeGreaterThanOrEqual(4);
    const stats = await admin.webhooks.stats(target.id, { since: since });
    expect(stats.attempts.succeeded).toBe(0);
    expect(stats.successRate).toBe(0);
    const every = [];
    for await (const item of admin.webhooks.allStats({ since, pageSize: 1 })) every.push(item);
    // The same figures as stats(id) (attempts may still be arriving: at least those it counted).
    const mine = every.find((i) => i.webhookId === target.id)!.stats;
    expect(mine.attempts.succeeded).toBe(0);
    expect(mine.attempts.total).toBeGreaterThanOrEqual(stats.attempts.total);
    const page = await admin.webhooks.statsPage({ since, limit: 1 });
    expect(page.items).toHaveLength(1);

    const rotated = await admin.webhooks.rotateSecret(target.id, { overlapSeconds: 60 });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(target.secret);

    await admin.webhooks.delete(target.id);
    expect(await apiError(admin.webhooks.get(target.id))).toMatchObject({ status: 404, code: 'not_found' });
  }, 120_000);

  // This test found a server bug: a PATCH wrote the current name back over the new one (resolveDestination copied
  // the whole target, not only its destination).
  it('webhooks.update renames a target, and only what it names changes', async () => {
    const target = await admin.webhooks.create({ name: 'before', url: s.deadUrl, topics: ['webhook.test'] });
    const renamed = await admin.webhooks.update(target.id, { name: 'after' });
    expect(renamed).toMatchObject({ name: 'after', url: s.deadUrl, topics: ['webhook.test'] });
    expect((await admin.webhooks.get(target.id)).name).toBe('after');
    await admin.webhooks.delete(target.id);
  });

  it('all() walks cursor pages: one request a page, every item once', async () => {
    const a = await admin.webhooks.create({ name: 'a', url: s.deadUrl, topics: ['webhook.test'] });
    const b = await admin.webhooks.create({ name: 'b', url: s.deadUrl, topics: ['webhook.test'] });
    const recording = recordingFetch();
    const counted = createAdminClient({ baseUrl: s.baseUrl, token: await s.adminToken('admin:read'), fetch: recording.fetch });
    const ids: string[] = [];
    for await (const t of counted.webhooks.all({ pageSize: 1 })) ids.push(t.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(new Set(ids).size).toBe(ids.length);
    // svc reads one row past a page, so the last page already says it is the last: one request per item, none more.
    expect(recording.requests).toHaveLength(ids.length);
    expect(recording.requests.every((r) => r.headers.get('authorization')?.startsWith('Bearer svcadm_'))).toBe(true);
  });

  it('openapi() answers the document the types were generated from', async () => {
    const doc = await admin.openapi();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/admin/v1/webhooks', '/admin/v1/deliveries']));
  });
});

describe('svc-sdk/admin: errors and scopes', () => {
  let s: AdminTestServer;

  beforeAll(async () => {
    s = await startAdminTestServer('sqlite');
  }, 120_000);
  afterAll(async () => s?.server.close());

  it('a token without the scope a call needs: 403 forbidden, with the request id', async () => {
    const reader = createAdminClient({ baseUrl: s.baseUrl, token: await s.adminToken('admin:read') });
    expect((await reader.collections.list()).items).toEqual([]);
    const denied = await apiError(reader.collections.create({ name: 'orders' }));
    expect(denied).toMatchObject({ status: 403, code: 'forbidden', requestId: expect.any(String) });
    expect(denied.message).toContain(`(request ${denied.requestId})`);

    const writer = createAdminClient({ baseUrl: s.baseUrl, token: await s.adminToken('admin:webhooks') });
    expect(await apiError(writer.webhooks.list())).toMatchObject({ status: 403, code: 'forbidden' });
    expect(await apiError(writer.deliveries.list())).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('a token svc does not know: 401; a fault in the body: 422 with the field', async () => {
    const stranger = createAdminClient({ baseUrl: s.baseUrl, token: 'svcadm_not-a-token-svc-issued' });
    expect(await apiError(stranger.webhooks.list())).toMatchObject({ status: 401, requestId: expect.any(String) });

    const admin = createAdminClient({ baseUrl: s.baseUrl, token: await s.adminToken('admin:read', 'admin:webhooks', 'admin:collections') });
    await admin.collections.create({ name: 'orders', fields: [{ name: 'total', type: 'number' }] });
    const bad = await apiError(
      admin.webhooks.create({ name: 'x', url: s.deadUrl, topics: ['record.created'], collections: ['orders'], filter: 'nope >= 1' }),
    );
    expect(bad).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(bad.errors.map((e) => e.path)).toContain('/filter');
    const query = await apiError(admin.deliveries.list({ since: 'yesterday' }));
    expect(query).toMatchObject({ status: 400 });
  });

  it('refuses options that could never work before sending anything', () => {
    expect(() => createAdminClient({ baseUrl: '127.0.0.1:8080', token: 'svcadm_x' })).toThrow(TypeError);
    expect(() => createAdminClient({ baseUrl: s.baseUrl, token: 'svc_pat_x' })).toThrow(/admin token/);
  });
});

const script = fileURLToPath(new URL('../examples/admin-script.mjs', import.meta.url));

const runExample = (env: Record<string, string>) => runScript(script, env, 30_000);
const lines = jsonLines;

describe('examples/admin-script.mjs against svc', () => {
  let s: AdminTestServer;

  beforeAll(async () => {
    ensureClientBuilt();
    s = await startAdminTestServer('sqlite');
  }, 120_000);
  afterAll(async () => s?.server.close());

  it('creates a collection and a filtered target; a second run finds both', async () => {
    const token = await s.adminToken('admin:read', 'admin:collections', 'admin:webhooks');
    const env = { SVC_URL: s.baseUrl, SVC_ADMIN_TOKEN: token, SVC_WEBHOOK_URL: s.deadUrl };
    const first = await runExample(env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const steps = lines(first.stdout);
    expect(steps.map((l) => l.step)).toEqual(['collection', 'target', 'test delivery']);
    expect(steps[0]).toEqual({ step: 'collection', name: 'orders', created: true });
    expect(steps[1]).toMatchObject({ created: true, filter: "status = 'open' && total >= 100", secret: expect.stringMatching(/^whsec_/) });

    // What the script made, read back with a client of this test: the filter decides real jobs.
    const admin = createAdminClient({ baseUrl: s.baseUrl, token });
    const target = await admin.webhooks.get(steps[1]!.id as string);
    expect(target).toMatchObject({ url: s.deadUrl, collections: ['orders'], topics: ['record.created', 'record.updated'] });
    const write = (data: Record<string, unknown>) =>
      admin.api.POST('/admin/v1/collections/{name}/records', { params: { path: { name: 'orders' } }, body: { data } });
    const matching = (await write({ status: 'open', total: 250 })).data!.id;
    const other = (await write({ status: 'open', total: 20 })).data!.id;
    expect((await admin.deliveries.list({ recordId: matching })).items).toHaveLength(1);
    expect((await admin.deliveries.list({ recordId: other })).items).toHaveLength(0);

    const second = await runExample(env);
    expect(second.code).toBe(0);
    expect(lines(second.stdout).slice(0, 2)).toEqual([
      { step: 'collection', name: 'orders', created: false, added: [] },
      { step: 'target', id: target.id, created: false, filter: target.filter },
    ]);
  }, 120_000);

  it('reports svc errors by code and request id, exit status 1', async () => {
    const env = { SVC_URL: s.baseUrl, SVC_ADMIN_TOKEN: await s.adminToken('admin:read'), SVC_WEBHOOK_URL: s.deadUrl };
    const denied = await runExample(env);
    expect(denied.code).toBe(1);
    const [error] = lines(denied.stderr);
    expect(error).toMatchObject({ status: 403, code: 'forbidden', requestId: expect.any(String) });
  }, 60_000);
});
