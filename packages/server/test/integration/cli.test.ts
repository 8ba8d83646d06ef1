import { spawn } from 'node:child_process';
import SQLite from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyTestDatabase, DIALECTS, type TestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/server.js';
import { openSse } from '../helpers/sse.js';
import { svc } from '../helpers/svc-command.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** The built command, as `npm start` and users run it (`npm test` builds first); the source through tsx otherwise. */
const BUILT = fileURLToPath(new URL('../../dist/svc.mjs', import.meta.url));
const serveCommand = existsSync(BUILT) ? [BUILT] : ['--import', 'tsx', MAIN];

describe.each(DIALECTS)('the svc command (%s)', (dialect) => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createEmptyTestDatabase(dialect);
    env = { SVC_DATABASE_URL: db.url, SVC_SECRET_KEY: randomBytes(32).toString('hex'), SVC_LOG_LEVEL: 'warn' };
  });
  afterAll(async () => db.drop());

  it('migrate, admin create, token create: results on stdout, errors on stderr with status 1', async () => {
    const migrate = await svc(['migrate'], env);
    expect(migrate.code).toBe(0);
    const admin = await svc(['admin', 'create', '--email', 'cli@example.com', '--password', 'long enough password'], env);
    expect(admin.code).toBe(0);
    expect(admin.stdout.trim()).toMatch(/^adm_/);
    const dup = await svc(['admin', 'create', '--email', 'cli@example.com', '--password', 'long enough password'], env);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('conflict');
    const token = await svc(['token', 'create', '--name', 'ci', '--scope', 'records:read', '--collection', 'issues'], env);
    expect(token.code).toBe(0);
    expect(token.stdout).toMatch(/^svc_pat_[A-Za-z0-9_-]+\n$/);
    const badScope = await svc(['token', 'create', '--name', 'x', '--scope', 'everything'], env);
    expect(badScope.code).toBe(1);
    // The name rule the API's schema holds (SPEC: ^[a-z][a-z0-9_]{0,62}$), and nothing written.
    const badCollection = await svc(['token', 'create', '--name', 'x', '--collection', 'Bad-Name'], env);
    expect(badCollection.code).toBe(1);
    expect(badCollection.stdout).toBe('');
    expect(badCollection.stderr).toMatch(/validation_failed: "Bad-Name" is not a collection name/);
    // Six processes, each compiling the sources through tsx: 8 s apiece at CI's load, past the 30 s default.
  }, 120_000);

  it('a bad setting stops the start with a message naming the variable', async () => {
    const res = await svc(['serve'], { ...env, SVC_PORT: 'eighty' });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/SVC_PORT/);
    const wrongKey = await svc(['migrate'], { ...env, SVC_SECRET_KEY: randomBytes(32).toString('hex') });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/SVC_SECRET_KEY.*does not match/);
  });

  it.runIf(dialect === 'sqlite')('admin create, token create, admin-token create and prune refuse a SQLite path that holds no database, making nothing there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-typo-'));
    try {
      const typo = { ...env, SVC_DATABASE_URL: `sqlite:${join(dir, 'svc-typo.db')}` };
      delete (typo as Record<string, string>).SVC_SECRET_KEY;
      for (const args of [
        ['admin', 'create', '--email', 'typo@example.com', '--password', 'long enough password'],
        ['token', 'create', '--name', 'typo'],
        ['admin-token', 'create', '--name', 'typo', '--scope', 'admin:read'],
        ['prune'],
      ]) {
        const res = await svc(args, typo);
        expect(res.code, args.join(' ')).toBe(1);
        expect(res.stdout).toBe('');
        expect(res.stderr).toMatch(/SVC_DATABASE_URL: names no database \(.*svc-typo\.db does not exist\)/);
      }
      // Neither a database nor a key file beside it.
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it.runIf(dialect === 'sqlite')('a one-shot command beside a process holding the write lock names the database that is locked', async () => {
    const path = db.url.slice('sqlite:'.length);
    const holder = new SQLite(path);
    try {
      holder.exec('begin immediate');
      const res = await svc(['token', 'create', '--name', 'locked'], env);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(`${path} is locked: another process has held its write lock for over 5 s`);
    } finally {
      holder.exec('rollback');
      holder.close();
    }
  }, 120_000);

  it('--help lists every command', async () => {
    const res = await svc(['--help'], env);
    for (const c of ['serve', 'worker', 'migrate', 'admin', 'token']) expect(res.stdout).toContain(c);
    const tokenHelp = await svc(['token', 'create', '--help'], env);
    expect(tokenHelp.stdout).toContain('--collection');
  });

  it('serve answers /readyz and exits cleanly on SIGTERM', async () => {
    const port = await freePort();
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
    const child = spawn(process.execPath, [...serveCommand, 'serve'], { env: { ...clean, ...env, SVC_PORT: String(port), SVC_LOG_LEVEL: 'info' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const ready = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
      return res?.status === 200;
    }, 'readyz', 20_000, 100);
    expect(ready).toBe(true);
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/capabilities`, { headers: { 'x-request-id': 'cli-test-1' } });
    expect(res.status).toBe(200);
    // An open event stream (the admin's, with the admin made above) ends cleanly and does not hold the shutdown.
    const login = await fetch(`http://127.0.0.1:${port}/admin/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'cli@example.com', password: 'long enough password' }),
    });
    expect(login.status).toBe(200);
    const stream = await openSse(`http://127.0.0.1:${port}/admin/v1/events/stream`, {
      cookie: login.headers.get('set-cookie')!.split(';')[0]!,
      'x-svc-csrf': ((await login.json()) as { csrfToken: string }).csrfToken,
    });
    expect(stream.status).toBe(200);
    const code = await new Promise<number | null>((resolve) => {
      child.on('close', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
    await stream.ended;
    const lines = out.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.find((l) => l.requestId === 'cli-test-1')).toMatchObject({ status: 200, url: '/api/v1/capabilities' });
    expect(lines.at(-1).msg).toBe('stopped');
  }, 30_000);
});
