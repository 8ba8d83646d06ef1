import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRouteDecision, adminScopeFor } from '../../src/auth/admin-scopes.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { registeredRoutes } from '../helpers/routes.js';

/**
 * The admin-token policy (auth/admin-scopes.ts) against every admin route the app registers. The table below is the
 * policy as SPEC §16 states it, one line per route: a new route fails this test until someone writes its line, so no
 * route is opened to tokens (or closed to them) by accident.
 */
const EXPECTED: Record<string, string | null> = {
  'GET /admin/v1/admins': null,
  'POST /admin/v1/admins': null,
  'DELETE /admin/v1/admins/:id': null,
  'GET /admin/v1/admin-tokens': null,
  'POST /admin/v1/admin-tokens': null,
  'DELETE /admin/v1/admin-tokens/:id': null,
  'GET /admin/v1/session': null,
  'POST /admin/v1/session': null,
  'DELETE /admin/v1/session': null,
  'POST /admin/v1/session/password': null,
  'POST /admin/v1/setup': null,
  'GET /admin/v1/api/schema': 'admin:read',
  'GET /admin/v1/openapi.json': 'admin:read',
  'GET /admin/v1/events': 'admin:read',
  'GET /admin/v1/events/stream': 'admin:read',
  'GET /admin/v1/events/:id': 'admin:read',
  'GET /admin/v1/collections': 'admin:read',
  'GET /admin/v1/collections/:name': 'admin:read',
  'GET /admin/v1/collections/:name/records': 'admin:read',
  'GET /admin/v1/collections/:name/records/:id': 'admin:read',
  'POST /admin/v1/collections': 'admin:collections',
  'PATCH /admin/v1/collections/:name': 'admin:collections',
  'DELETE /admin/v1/collections/:name': 'admin:collections',
  'POST /admin/v1/collections/:name/records': 'admin:collections',
  'PATCH /admin/v1/collections/:name/records/:id': 'admin:collections',
  'DELETE /admin/v1/collections/:name/records/:id': 'admin:collections',
  'GET /admin/v1/tokens': 'admin:read',
  'POST /admin/v1/tokens': 'admin:tokens',
  'DELETE /admin/v1/tokens/:id': 'admin:tokens',
  'GET /admin/v1/webhooks': 'admin:read',
  'GET /admin/v1/webhooks/:id': 'admin:read',
  'GET /admin/v1/webhooks/:id/stats': 'admin:read',
  'GET /admin/v1/webhooks/stats': 'admin:read',
  'POST /admin/v1/webhooks': 'admin:webhooks',
  'PATCH /admin/v1/webhooks/:id': 'admin:webhooks',
  'DELETE /admin/v1/webhooks/:id': 'admin:webhooks',
  'POST /admin/v1/webhooks/:id/test': 'admin:webhooks',
  'POST /admin/v1/webhooks/:id/rotate-secret': 'admin:webhooks',
  'POST /admin/v1/webhooks/:id/recover': 'admin:webhooks',
  'POST /admin/v1/webhooks/:id/replay': 'admin:webhooks',
  // The target form's broker names and kinds (never URLs): a read like any other.
  'GET /admin/v1/brokers': 'admin:read',
  'GET /admin/v1/deliveries': 'admin:read',
  'GET /admin/v1/deliveries/:id': 'admin:read',
  'POST /admin/v1/deliveries/:id/retry': 'admin:webhooks',
  'POST /admin/v1/deliveries/retry': 'admin:webhooks',
};

describe('admin-token policy (auth/admin-scopes.ts)', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Any database would do: only the route list is read.
    t = await createTestApp('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('decides every registered admin route, as the table says', () => {
    const admin = registeredRoutes(t.app.printRoutes({ commonPrefix: false })).filter((r) => r.split(' ')[1]!.startsWith('/admin/v1/'));
    expect(admin.length).toBeGreaterThan(40);
    for (const route of admin) {
      const [method, pattern] = route.split(' ') as [string, string];
      expect(adminRouteDecision(method, pattern).kind, `${route}: no rule in auth/admin-scopes.ts`).not.toBe('unclassified');
      expect(route in EXPECTED, `${route}: add it to this table with the scope SPEC §16 gives it`).toBe(true);
      expect(adminScopeFor(method, pattern), route).toBe(EXPECTED[route]);
    }
    expect(Object.keys(EXPECTED).filter((r) => !admin.includes(r))).toEqual([]);
  });

  it('HEAD is a read; an unknown write is refused to tokens (unclassified), not guessed', () => {
    expect(adminScopeFor('HEAD', '/admin/v1/webhooks')).toBe('admin:read');
    expect(adminRouteDecision('POST', '/admin/v1/something-new')).toEqual({ kind: 'unclassified' });
    expect(adminScopeFor('POST', '/admin/v1/something-new')).toBeNull();
    expect(adminRouteDecision('GET', '/api/v1/events')).toEqual({ kind: 'unclassified' });
    // A prefix is a path segment, not a string prefix: /admin/v1/tokens does not cover /admin/v1/tokensmith.
    expect(adminScopeFor('POST', '/admin/v1/tokensmith')).toBeNull();
    expect(adminScopeFor('POST', '/admin/v1/admin-tokens')).toBeNull();
  });
});
