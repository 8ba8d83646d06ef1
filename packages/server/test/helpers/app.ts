import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../../src/app.js';
import { createAdmin } from '../../src/auth/setup.js';
import type { Clock } from '../../src/lib/clock.js';
import type { StreamTiming } from '../../src/events/stream-fanout.js';
import type { Context } from '../../src/context.js';
import type { Resolver } from '../../src/webhooks/destination-guard.js';
import type { JobHandoff } from '../../src/webhooks/queue/enqueue.js';
import type { TestDatabase } from './db.js';
import { createTestContext, type TestContext } from './context.js';
import type { Dialect } from './db.js';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'correct horse battery staple';

export interface AdminSession {
  cookie: string;
  csrf: string;
  /** Headers for an admin request: the cookie and the CSRF token. */
  headers: Record<string, string>;
}

export interface TestApp extends TestContext {
  app: FastifyInstance;
  /** Responses that did not match their documented schema; close() fails when any exist. */
  violations: string[];
  login(email?: string, password?: string): Promise<AdminSession>;
  /** Creates an API token through the admin API and returns the secret token. */
  token(scopes?: string[], collections?: string[] | null): Promise<string>;
  collection(name: string, fields: Array<{ name: string; type: string; required?: boolean }>): Promise<void>;
  admin: AdminSession;
}

export function cookieFrom(res: LightMyRequestResponse): string {
  const set = res.headers['set-cookie'];
  const line = Array.isArray(set) ? set[0] : set;
  if (!line) throw new Error(`no cookie set (status ${res.statusCode}: ${res.body})`);
  return line.split(';')[0]!;
}

/** An app on a fresh database with one admin logged in; requests go through inject(). */
export async function createTestApp(
  dialect: Dialect,
  env: Record<string, string> = {},
  options: { clock?: Clock; resolver?: Resolver; database?: TestDatabase; logger?: Logger; handoff?: (ctx: Context) => JobHandoff; streamTiming?: StreamTiming } = {},
): Promise<TestApp> {
  const base = await createTestContext(dialect, env, options);
  const violations: string[] = [];
  // As the runtime does: the worker exists before the app, which hands it the jobs of its own writes.
  const app = await buildApp(base.ctx, { responseViolations: violations, handoff: options.handoff?.(base.ctx) ?? null, streamTiming: options.streamTiming });
  await createAdmin(base.ctx, ADMIN_EMAIL, ADMIN_PASSWORD);
  const login = async (email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<AdminSession> => {
    const res = await app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password } });
    if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
    const cookie = cookieFrom(res);
    const csrf = (res.json() as { csrfToken: string }).csrfToken;
    return { cookie, csrf, headers: { cookie, 'x-svc-csrf': csrf } };
  };
  const admin = await login();
  const t: TestApp = {
    ...base,
    app,
    violations,
    admin,
    login,
    async token(scopes = ['records:read', 'records:write'], collections = null) {
      const res = await app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: admin.headers, payload: { name: 'test', scopes, collections } });
      if (res.statusCode !== 201) throw new Error(`token: ${res.statusCode} ${res.body}`);
      return (res.json() as { token: string }).token;
    },
    async collection(name, fields) {
      const res = await app.inject({
        method: 'POST',
        url: '/admin/v1/collections',
        headers: admin.headers,
        payload: { name, fields: fields.map((f) => ({ required: false, ...f })) },
      });
      if (res.statusCode !== 201) throw new Error(`collection: ${res.statusCode} ${res.body}`);
    },
    close: async () => {
      await app.close();
      await base.close();
      if (violations.length > 0) throw new Error(`responses off their documented schema:\n${violations.join('\n')}`);
    },
  };
  return t;
}
