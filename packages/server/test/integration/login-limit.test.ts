import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createAdmin } from '../../src/auth/setup.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';

const MAX = 5;
const login = (app: FastifyInstance, password: string, extra: { email?: string; ip?: string; headers?: Record<string, string> } = {}) =>
  app.inject({
    method: 'POST',
    url: '/admin/v1/session',
    remoteAddress: extra.ip ?? '198.51.100.1',
    headers: extra.headers ?? {},
    payload: { email: extra.email ?? ADMIN_EMAIL, password },
  });

const histogram = (statuses: number[]) => statuses.reduce<Record<number, number>>((h, s) => ({ ...h, [s]: (h[s] ?? 0) + 1 }), {});

describe.each(DIALECTS)('login limit (%s)', (dialect) => {
  // A second app on the same database stands for a second process: the budget is counted in the database.
  let t: TestApp;
  let second: { base: TestContext; app: FastifyInstance } | null = null;
  const env = { SVC_LOGIN_MAX_FAILURES: String(MAX), SVC_SECRET_KEY: randomBytes(32).toString('hex') };
  beforeAll(async () => {
    t = await createTestApp(dialect, env);
    if (dialect === 'postgres') {
      const base = await createTestContext(dialect, env, { database: t.database });
      second = { base, app: await buildApp(base.ctx) };
    }
  });
  afterAll(async () => {
    if (second) {
      await second.app.close();
      await second.base.ctx.database.close();
    }
    await t.close();
  });

  it('parallel wrong guesses are judged at most SVC_LOGIN_MAX_FAILURES times, the rest rate_limited', async () => {
    const apps = second ? [t.app, second.app] : [t.app];
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => login(apps[i % apps.length]!, `wrong password ${i}`)));
    const statuses = answers.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401).length, JSON.stringify(histogram(statuses))).toBeLessThanOrEqual(MAX);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    for (const r of answers.filter((a) => a.statusCode === 429)) expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    // What the burst left of the budget is still there, one guess at a time, and then it is spent: the right
    // password is refused too until the window passes.
    let judged = statuses.filter((s) => s === 401).length;
    while ((await login(t.app, 'one more wrong guess')).statusCode === 401) judged++;
    expect(judged).toBe(MAX);
    expect((await login(t.app, ADMIN_PASSWORD)).statusCode).toBe(429);
  });

  it('a correct login is not counted as a failure', async () => {
    const email = 'second@example.com';
    const password = 'another long password';
    await createAdmin(t.ctx, email, password);
    const ip = '198.51.100.2';
    for (let i = 0; i < MAX + 2; i++) expect((await login(t.app, password, { email, ip })).statusCode).toBe(200);
    for (let i = 0; i < MAX; i++) expect((await login(t.app, 'wrong', { email, ip })).statusCode).toBe(401);
    expect((await login(t.app, password, { email, ip })).statusCode).toBe(429);
  });
});

describe.each(DIALECTS)('SVC_TRUST_PROXY and the login limit (%s)', (dialect) => {
  const wrong = (app: FastifyInstance, email: string, forwardedFor: string) =>
    login(app, 'not the password', { email, ip: '10.0.0.9', headers: { 'x-forwarded-for': forwardedFor } });

  it('behind a trusted proxy, X-Forwarded-For decides the client address', async () => {
    const t = await createTestApp(dialect, { SVC_LOGIN_MAX_FAILURES: '2', SVC_TRUST_PROXY: '10.0.0.0/8' });
    try {
      expect((await wrong(t.app, 'a@example.com', '203.0.113.7')).statusCode).toBe(401);
      expect((await wrong(t.app, 'b@example.com', '203.0.113.7')).statusCode).toBe(401);
      expect((await wrong(t.app, 'c@example.com', '203.0.113.7')).statusCode).toBe(429);
      // Another client behind the same proxy keeps its own budget.
      expect((await wrong(t.app, 'd@example.com', '203.0.113.8')).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });

  it('without SVC_TRUST_PROXY, X-Forwarded-For is ignored (a client cannot pick its own address)', async () => {
    const t = await createTestApp(dialect, { SVC_LOGIN_MAX_FAILURES: '2' });
    try {
      expect((await wrong(t.app, 'a@example.com', '203.0.113.1')).statusCode).toBe(401);
      expect((await wrong(t.app, 'b@example.com', '203.0.113.2')).statusCode).toBe(401);
      expect((await wrong(t.app, 'c@example.com', '203.0.113.3')).statusCode).toBe(429);
    } finally {
      await t.close();
    }
  });
});
