import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from '../helpers/db.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { exited, spawnSvc } from '../helpers/processes.js';
import { freePort, portOpen } from '../helpers/server.js';
import { svc } from '../helpers/svc-command.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/**
 * `svc serve` started with the given environment, followed until it exits or until something answers on its port:
 * a serve that starts is stopped and reported as listening, whatever else it would have done.
 */
function exitOrListen(args: string[], env: Record<string, string>, port: number): Promise<{ code: number | null; stderr: string; listening: boolean }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { ...clean, ...env, SVC_PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => {
    let listening = false;
    const probe = setInterval(() => {
      void portOpen(port).then((open) => {
        if (!open || listening) return;
        listening = true;
        child.kill('SIGKILL');
      });
    }, 100);
    child.on('close', (code) => {
      clearInterval(probe);
      resolve({ code, stderr, listening });
    });
  });
}

const ready = (port: number) =>
  waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, `serve ready on ${port}`, 60_000, 100);

/**
 * On SQLite one `svc serve` runs per database file (docs/production.md): what an API process keeps to itself — the
 * schema-change lock of a collection, wake-ups, caches — is shared between API processes only on PostgreSQL. A second
 * serve on the file is refused before it listens; `svc worker` and the one-shot commands work beside the serve; the
 * lock is the operating system's, so a serve killed with SIGKILL leaves nothing that stops the next start.
 */
describe('one svc serve per SQLite file', () => {
  let dir: string;
  let file: string;
  let env: Record<string, string>;
  let receiver: HttpsReceiver;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-serve-lock-'));
    file = join(dir, 'svc.db');
    receiver = await startHttpsReceiver();
    writeFileSync(join(dir, 'ca.pem'), receiver.ca);
    env = {
      SVC_DATABASE_URL: `sqlite:${file}`,
      SVC_SECRET_KEY: randomBytes(32).toString('hex'),
      SVC_HOST: '127.0.0.1',
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: join(dir, 'ca.pem'),
      SVC_WEBHOOK_POLL_MS: '50',
      SVC_LOG_LEVEL: 'warn',
    };
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second serve naming the file and the holder; worker and one-shots work beside it; a SIGKILL frees it at once', async () => {
    const first = await freePort();
    const serve = spawnSvc(['serve', '--no-worker'], { ...env, SVC_PORT: String(first) });
    children.push(serve);
    await ready(first);

    // A second serve, with or without its worker: status 1, the database and the holder named, never listening.
    for (const args of [['serve'], ['serve', '--no-worker']]) {
      const port = await freePort();
      const second = await exitOrListen(args, env, port);
      expect(second.listening, args.join(' ')).toBe(false);
      expect(second.code, second.stderr).toBe(1);
      expect(second.stderr).toContain(`svc: ${file} is in use by another svc serve (pid ${serve.pid};`);
      expect(second.stderr).toMatch(/svc worker.*PostgreSQL/);
      expect(await portOpen(port)).toBe(false);
    }

    // One-shot commands beside the serve, as before.
    const adminToken = await svc(['admin-token', 'create', '--name', 'ops', '--scope', 'admin:collections', 'admin:webhooks'], env);
    expect(adminToken.code, adminToken.stderr).toBe(0);
    const apiToken = await svc(['token', 'create', '--name', 'app'], env);
    expect(apiToken.code, apiToken.stderr).toBe(0);
    const admin = { authorization: `Bearer ${adminToken.stdout.trim()}`, 'content-type': 'application/json' };
    const api = `http://127.0.0.1:${first}`;
    const collection = await fetch(`${api}/admin/v1/collections`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'issues', fields: [{ name: 'title', type: 'text' }] }) });
    expect(collection.status).toBe(201);
    const target = await fetch(`${api}/admin/v1/webhooks`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'r', url: `${receiver.url}/hook`, topics: ['record.created'] }) });
    expect(target.status).toBe(201);

    // A worker on the same file starts and delivers what the serve (with no worker of its own) committed.
    const worker = spawnSvc(['worker'], env);
    children.push(worker);
    const created = await fetch(`${api}/api/v1/collections/issues/records`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiToken.stdout.trim()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { title: 'one' } }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await waitFor(() => receiver.requests.some((r) => JSON.parse(r.body).recordId === id), 'the delivery by svc worker', 60_000, 50);
    expect(worker.exitCode).toBe(null);

    // Killed outright, the serve leaves no lock behind: the next serve starts at once, beside the same worker.
    serve.kill('SIGKILL');
    await exited(serve);
    const next = await freePort();
    const restarted = spawnSvc(['serve'], { ...env, SVC_PORT: String(next) });
    children.push(restarted);
    await ready(next);
    expect(restarted.exitCode).toBe(null);
    // Processes through tsx, one after another: slow on a loaded machine.
  }, 240_000);
});

/** What the lock leaves alone: an in-memory database is each process's own; PostgreSQL shares everything between API processes. */
describe('two svc serve where the lock does not apply', () => {
  const children: ChildProcess[] = [];
  let database: TestDatabase | undefined;
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await database?.drop();
  });

  const bothServe = async (url: string) => {
    const env = { SVC_DATABASE_URL: url, SVC_SECRET_KEY: randomBytes(32).toString('hex'), SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn' };
    const ports = [await freePort(), await freePort()];
    children.push(...ports.map((port) => spawnSvc(['serve', '--no-worker'], { ...env, SVC_PORT: String(port) })));
    await Promise.all(ports.map(ready));
  };

  it('sqlite::memory:', async () => bothServe('sqlite::memory:'), 120_000);

  it.runIf(POSTGRES_URL)('PostgreSQL', async () => {
    database = await createTestDatabase('postgres');
    await bothServe(database.url);
  }, 120_000);
});
