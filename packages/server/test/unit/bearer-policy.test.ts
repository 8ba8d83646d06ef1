import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiToken, Scope } from '../../src/auth/api-tokens-store.js';
import { adminTokenRefusal } from '../../src/auth/admin-scopes.js';
import { bearerRefusal, requireBearer, showsRecordData } from '../../src/auth/bearer-policy.js';
import { AppError } from '../../src/errors.js';
import { publicRoutes } from '../../src/http/bearer-auth.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { registeredRoutes } from '../helpers/routes.js';

const token = (scopes: Scope[], collections: string[] | null): ApiToken => ({ id: 'tok_x', name: 't', scopes, collections, createdAt: 0, lastUsedAt: null });

/** The collections that exist, and every name the policy asked about, in order. */
function catalogue(...names: string[]) {
  const asked: string[] = [];
  return { asked, exists: (name: string) => (asked.push(name), names.includes(name)) };
}

const RECORDS_REFUSAL = 'This token may not use this collection.';
const EVENTS_REFUSAL = 'This token may not read events of that collection.';

/** The refusal as code and detail, or null: what a client sees of it. */
async function answer(t: ApiToken, scope: Scope, collections: string[], exists: (name: string) => boolean) {
  const refusal = await bearerRefusal(t, { scope, collections, exists });
  if (refusal === null) return null;
  expect(refusal).toBeInstanceOf(AppError);
  expect(refusal.status).toBe(403);
  return { code: refusal.code, detail: refusal.message };
}

describe('bearer policy (auth/bearer-policy.ts)', () => {
  it('the scope first: a token without it is refused before any collection is looked at', async () => {
    for (const scope of ['records:read', 'records:write', 'events:read'] as const) {
      const others = (['records:read', 'records:write', 'events:read'] as const).filter((s) => s !== scope);
      const c = catalogue('issues');
      expect(await answer(token(others, null), scope, ['issues', 'nosuch'], c.exists)).toEqual({ code: 'forbidden', detail: `This token lacks the ${scope} scope.` });
      expect(c.asked).toEqual([]);
    }
  });

  it('no collection named: the scope alone decides, and nothing is looked up', async () => {
    const c = catalogue();
    expect(await answer(token(['records:write'], ['issues']), 'records:write', [], c.exists)).toBeNull();
    expect(await answer(token(['events:read'], null), 'events:read', [], c.exists)).toBeNull();
    expect(c.asked).toEqual([]);
  });

  it('a token limited to some collections: another one is refused without being looked up', async () => {
    const c = catalogue('issues', 'notes');
    expect(await answer(token(['records:read'], ['notes']), 'records:read', ['issues'], c.exists)).toEqual({ code: 'forbidden', detail: RECORDS_REFUSAL });
    expect(await answer(token(['records:write'], ['notes']), 'records:write', ['issues'], c.exists)).toEqual({ code: 'forbidden', detail: RECORDS_REFUSAL });
    expect(await answer(token(['events:read'], ['notes']), 'events:read', ['notes', 'issues'], c.exists)).toEqual({ code: 'forbidden', detail: EVENTS_REFUSAL });
    expect(c.asked).toEqual([]);
  });

  it('a record route: the collection must exist too, listed by the token or not, and both refusals read alike', async () => {
    const c = catalogue('issues');
    expect(await answer(token(['records:read'], ['issues', 'gone']), 'records:read', ['issues'], c.exists)).toBeNull();
    expect(await answer(token(['records:read'], ['issues', 'gone']), 'records:read', ['gone'], c.exists)).toEqual({ code: 'forbidden', detail: RECORDS_REFUSAL });
    expect(await answer(token(['records:write'], null), 'records:write', ['issues'], c.exists)).toBeNull();
    expect(await answer(token(['records:write'], null), 'records:write', ['nosuch'], c.exists)).toEqual({ code: 'forbidden', detail: RECORDS_REFUSAL });
    expect(c.asked).toEqual(['issues', 'gone', 'issues', 'nosuch']);
  });

  it('the feed: a collection the token lists is readable without a look-up (a deleted one keeps its events); a token of every collection names only existing ones', async () => {
    const c = catalogue('issues');
    expect(await answer(token(['events:read'], ['issues', 'gone']), 'events:read', ['gone', 'issues'], c.exists)).toBeNull();
    expect(c.asked).toEqual([]);
    expect(await answer(token(['events:read'], null), 'events:read', ['issues'], c.exists)).toBeNull();
    expect(await answer(token(['events:read'], null), 'events:read', ['nosuch'], c.exists)).toEqual({ code: 'forbidden', detail: EVENTS_REFUSAL });
    expect(c.asked).toEqual(['issues', 'nosuch']);
  });

  it('each name is looked up once, in order, up to the first refusal', async () => {
    const c = catalogue('a', 'b');
    expect(await answer(token(['events:read'], null), 'events:read', ['a', 'b', 'a', 'nosuch', 'c'], c.exists)).toEqual({ code: 'forbidden', detail: EVENTS_REFUSAL });
    expect(c.asked).toEqual(['a', 'b', 'nosuch']);
  });

  it('an asynchronous look-up is awaited', async () => {
    const refusal = await bearerRefusal(token(['records:read'], null), { scope: 'records:read', collections: ['nosuch'], exists: async () => false });
    expect(refusal?.message).toBe(RECORDS_REFUSAL);
  });

  it('requireBearer throws the refusal and passes what the policy allows', async () => {
    const t = token(['records:read'], ['issues']);
    await expect(requireBearer(t, { scope: 'records:read', collections: ['issues'], exists: () => true })).resolves.toBeUndefined();
    await expect(requireBearer(t, { scope: 'records:read', collections: ['notes'], exists: () => true })).rejects.toMatchObject({ code: 'forbidden', message: RECORDS_REFUSAL });
  });

  it('a write answer shows record data only to a token with records:read (SPEC §11)', () => {
    expect(showsRecordData(token(['records:read', 'records:write'], null))).toBe(true);
    expect(showsRecordData(token(['records:write', 'events:read'], null))).toBe(false);
  });

  it('admin tokens keep their own rule (auth/admin-scopes.ts): a session-only route, then the route\'s scope', () => {
    expect(adminTokenRefusal(['admin:read'], 'GET', '/admin/v1/webhooks')).toBeNull();
    expect(adminTokenRefusal(['admin:read'], 'POST', '/admin/v1/webhooks')?.message).toBe('This admin token lacks the admin:webhooks scope.');
    expect(adminTokenRefusal(['admin:read', 'admin:tokens'], 'POST', '/admin/v1/admin-tokens')?.message).toBe('Admin tokens may not use this route: it needs an admin session.');
  });
});

/** The public routes anyone may call; every other `/api/v1` route is behind the bearer hook. */
const OPEN = ['GET /api/v1/capabilities', 'GET /api/v1/openapi.json'];

describe('every public route is behind the bearer hook (http/bearer-auth.ts)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 401 with the Bearer challenge to a request without a token, on every route but discovery', async () => {
    const routes = registeredRoutes(t.app.printRoutes({ commonPrefix: false })).filter((r) => r.split(' ')[1]!.startsWith('/api/v1/'));
    const guarded = routes.filter((r) => !OPEN.includes(r));
    expect(guarded.length).toBeGreaterThanOrEqual(7);
    expect(routes.filter((r) => OPEN.includes(r)).sort()).toEqual([...OPEN].sort());
    for (const route of guarded) {
      const [method, pattern] = route.split(' ') as [string, string];
      const url = pattern.replace(':collection', 'issues').replace(':id', 'rec_01J0000000000000000000000A');
      const res = await t.app.inject({ method: method as 'GET', url });
      expect(res.statusCode, route).toBe(401);
      expect(res.headers['www-authenticate'], route).toBe('Bearer realm="svc"');
    }
  });

  it('a route registered behind it without a bearer scope fails at start-up instead of being open', async () => {
    const app = Fastify();
    await expect(
      app.register(publicRoutes(t.ctx, async (api) => void api.get('/api/v1/unguarded', async () => 'open'))).ready(),
    ).rejects.toThrow('GET /api/v1/unguarded: a public route must state its bearer scope (config.bearer)');
    await app.close();
  });
});
