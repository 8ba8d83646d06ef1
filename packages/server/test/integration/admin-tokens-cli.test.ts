import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { svc } from '../helpers/svc-command.js';

/** `svc admin-token create --name N --scope S…` (SPEC §16): prints the token alone, which then works on the admin API. */
describe.each(DIALECTS)('svc admin-token create (%s)', (dialect) => {
  let t: TestApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    env = { SVC_DATABASE_URL: t.database.url, SVC_SECRET_KEY: t.ctx.config.secretKey!, SVC_LOG_LEVEL: 'warn' };
  });
  afterAll(async () => t?.close());

  it('prints only the token; it has the scopes asked for and is listed as made by cli', async () => {
    const res = await svc(['admin-token', 'create', '--name', 'deploy', '--scope', 'admin:read', 'admin:webhooks'], env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^svcadm_[A-Za-z0-9_-]{43}\n$/);
    const token = res.stdout.trim();
    const auth = { authorization: `Bearer ${token}` };
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: auth })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/collections', headers: auth, payload: { name: 'x', fields: [] } })).statusCode).toBe(403);
    const list = await t.app.inject({ method: 'GET', url: '/admin/v1/admin-tokens', headers: t.admin.headers });
    expect((list.json() as { items: unknown[] }).items).toContainEqual(expect.objectContaining({ name: 'deploy', scopes: ['admin:read', 'admin:webhooks'], createdBy: 'cli' }));
  }, 120_000);

  it('refuses no scope or an unknown one, on stderr with status 1', async () => {
    for (const args of [['--name', 'x'], ['--name', 'x', '--scope', 'records:read']]) {
      const res = await svc(['admin-token', 'create', ...args], env);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain('--scope');
    }
    // Two svc processes through tsx: slow on a loaded machine.
  }, 120_000);
});
