import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/db.js';
import { signatureValid } from '../helpers/delivery.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { svc } from '../helpers/svc-command.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §16: `svc backup` copies a live SQLite database and its key while `serve` writes to it; `svc restore` puts the
 * copy in place elsewhere; svc starts on it with every record, target and secret working.
 */
describe('svc backup and restore (SQLite)', () => {
  const cleanup: Array<() => Promise<unknown> | unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup.length = 0;
  });
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-backup-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  async function liveServer(receiver: HttpsReceiver, key: string, database?: TestDatabase): Promise<TestServer> {
    const caFile = join(tempDir(), 'ca.pem');
    writeFileSync(caFile, receiver.ca);
    const srv = await startTestServer({
      dialect: 'sqlite',
      database,
      env: { SVC_SECRET_KEY: key, SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_CA_FILE: caFile, SVC_WEBHOOK_POLL_MS: '50' },
    });
    // Closed once, by the test or after it.
    let closing: Promise<void> | null = null;
    const close = () => (closing ??= srv.close());
    cleanup.push(close);
    return { ...srv, close };
  }
  const http = async (srv: TestServer, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${srv.baseUrl}${path}`, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, json: await res.json().catch(() => null) };
  };

  it('backs up while serve writes, restores elsewhere, and svc starts there with every record, target and secret', async () => {
    const receiver = await startHttpsReceiver();
    cleanup.push(() => receiver.close());
    const key = randomBytes(32).toString('hex');
    const live = await liveServer(receiver, key);
    const ctx = live.ctx;
    const { createApiToken } = await import('../../src/auth/api-tokens.js');
    const { createCollection } = await import('../../src/records/collections.js');
    const { createTarget } = await import('../../src/webhooks/targets.js');
    await createCollection(ctx, 'notes', [{ name: 'title', type: 'text', required: true }]);
    const token = (await createApiToken(ctx, { name: 'w', scopes: ['records:read', 'records:write'], collections: null })).token;
    const bearer = { authorization: `Bearer ${token}` };
    const target = await createTarget(ctx, { name: 'r', url: `${receiver.url}/hook`, topics: ['record.created'], headers: { 'X-Api-Key': 'receiver-key-0042' } }, async () => {});

    // A writer that never stops until told: the backup runs in the middle of it.
    const written: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await http(live, 'POST', '/api/v1/collections/notes/records', bearer, { data: { title: `n${i} ${'x'.repeat(2000)}` } });
        expect(res.status).toBe(201);
        written.push(res.json.id);
      }
    })();
    await waitFor(() => written.length >= 200, '200 records written');
    const beforeBackup = [...written];
    const dir = join(tempDir(), 'nightly');
    const made = await svc(['backup', '--to', dir], { SVC_DATABASE_URL: live.database.url, SVC_SECRET_KEY: key, SVC_LOG_LEVEL: 'warn' });
    const duringBackup = written.length - beforeBackup.length;
    writing = false;
    await writer;
    expect(made.stderr).toContain('copying');
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(new RegExp(`wrote ${join(dir, 'svc.db')} \\(\\d+ bytes`));
    expect(made.stdout).toContain(`wrote ${join(dir, 'svc-secret.key')}`);
    expect(readFileSync(join(dir, 'svc-secret.key'), 'utf8').trim()).toBe(key);
    expect(statSync(join(dir, 'svc-secret.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'svc.db')).mode & 0o777).toBe(0o600);
    // The folder holds what the backup says it wrote, and nothing else (no -wal or -shm of the copy).
    expect(readdirSync(dir).sort()).toEqual(['backup.json', 'svc-secret.key', 'svc.db']);
    // Writes went on while it copied (serve was never blocked); a second backup into the same folder is refused.
    expect(duringBackup).toBeGreaterThan(0);
    expect((await svc(['backup', '--to', dir], { SVC_DATABASE_URL: live.database.url, SVC_SECRET_KEY: key })).stderr).toContain('already holds a backup');

    // Restoring over the database serve holds is refused, and leaves it alone.
    const refused = await svc(['restore', '--from', dir], { SVC_DATABASE_URL: live.database.url, SVC_SECRET_KEY: key });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('a running svc holds');
    expect((await http(live, 'GET', '/api/v1/collections/notes/records?limit=1', bearer)).status).toBe(200);

    // Elsewhere, with no SVC_SECRET_KEY: the key file goes beside the database.
    const elsewhere = await createTestDatabase('sqlite');
    cleanup.push(() => elsewhere.drop());
    const restored = await svc(['restore', '--from', dir], { SVC_DATABASE_URL: elsewhere.url, SVC_LOG_LEVEL: 'warn' });
    expect(restored.code, restored.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['backup.json', 'svc-secret.key', 'svc.db']);
    const keyFile = join(elsewhere.dir, 'svc-secret.key');
    expect(restored.stdout).toContain(`wrote ${keyFile}`);
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(key);

    const back = await liveServer(receiver, readFileSync(keyFile, 'utf8').trim(), elsewhere);
    const all: string[] = [];
    for (let cursor: string | null = null; ; ) {
      const page = await http(back, 'GET', `/api/v1/collections/notes/records?limit=500${cursor ? `&cursor=${cursor}` : ''}`, bearer);
      expect(page.status).toBe(200);
      all.push(...page.json.items.map((r: { id: string }) => r.id));
      cursor = page.json.nextCursor;
      if (!cursor) break;
    }
    // Every record written before the backup began is there; none that was never written; at most the ones of its copy.
    for (const id of beforeBackup) expect(all).toContain(id);
    expect(all.every((id) => written.includes(id))).toBe(true);
    console.log(`backup: ${beforeBackup.length} records before it, ${duringBackup} written while it ran, ${all.length} restored`);

    // The target and its secret (and its sealed header) work: a delivery verifies with the secret shown before the backup.
    await live.close();
    const requestsBefore = receiver.requests.length;
    const res = await http(back, 'POST', '/api/v1/collections/notes/records', bearer, { data: { title: 'after restore' } });
    expect(res.status).toBe(201);
    const delivery = await waitFor(() => receiver.requests.slice(requestsBefore).find((r) => JSON.parse(r.body).recordId === res.json.id), 'the delivery after restore');
    expect(signatureValid(delivery.headers, delivery.body, [target.secret!])).toBe(true);
    expect(delivery.headers['x-api-key']).toBe('receiver-key-0042');
  }, 120_000);

  it('restore moves a stopped database aside, never deletes it, and refuses a key that is not the backup\'s', async () => {
    const receiver = await startHttpsReceiver();
    cleanup.push(() => receiver.close());
    const key = randomBytes(32).toString('hex');
    const first = await createTestDatabase('sqlite');
    cleanup.push(() => first.drop());
    const srv = await liveServer(receiver, key, first);
    await srv.close();
    const dir = join(tempDir(), 'b');
    expect((await svc(['backup', '--to', dir], { SVC_DATABASE_URL: first.url, SVC_SECRET_KEY: key })).code).toBe(0);

    const wrongKey = await svc(['restore', '--from', dir], { SVC_DATABASE_URL: first.url, SVC_SECRET_KEY: randomBytes(32).toString('hex') });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain("SVC_SECRET_KEY is not the backup's key");

    const over = await svc(['restore', '--from', dir], { SVC_DATABASE_URL: first.url, SVC_SECRET_KEY: key });
    expect(over.code, over.stderr).toBe(0);
    const aside = /moved what was there to (.+)\n/.exec(over.stdout)?.[1];
    expect(aside).toBeDefined();
    expect(existsSync(aside!)).toBe(true);

    // A backup made before backups were one file is in WAL mode: restoring it leaves its folder as it was.
    const older = new Database(join(dir, 'svc.db'));
    expect(older.pragma('journal_mode = WAL', { simple: true })).toBe('wal');
    older.close();
    const manifest = JSON.parse(readFileSync(join(dir, 'backup.json'), 'utf8')) as { database: { sha256: string } };
    manifest.database.sha256 = createHash('sha256').update(readFileSync(join(dir, 'svc.db'))).digest('hex');
    writeFileSync(join(dir, 'backup.json'), JSON.stringify(manifest));
    const fromOlder = await svc(['restore', '--from', dir], { SVC_DATABASE_URL: first.url, SVC_SECRET_KEY: key });
    expect(fromOlder.code, fromOlder.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['backup.json', 'svc-secret.key', 'svc.db']);

    // A damaged copy is refused before anything is touched.
    writeFileSync(join(dir, 'svc.db'), Buffer.concat([readFileSync(join(dir, 'svc.db')), Buffer.from('tampered')]));
    const damaged = await svc(['restore', '--from', dir], { SVC_DATABASE_URL: first.url, SVC_SECRET_KEY: key });
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toContain('differs from the copy the backup made');
  }, 120_000);
});

describe.each(DIALECTS)('svc backup on another database (%s)', (dialect) => {
  it.runIf(dialect === 'postgres')('PostgreSQL: refuses, pointing to pg_dump and pg_restore and naming SVC_SECRET_KEY', async () => {
    const db = await createTestDatabase(dialect);
    try {
      const res = await svc(['backup', '--to', join(tmpdir(), 'never')], { SVC_DATABASE_URL: db.url, SVC_SECRET_KEY: randomBytes(32).toString('hex') });
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/pg_dump.*SVC_SECRET_KEY/s);
      const back = await svc(['restore', '--from', join(tmpdir(), 'never')], { SVC_DATABASE_URL: db.url, SVC_SECRET_KEY: randomBytes(32).toString('hex') });
      expect(back.stderr).toMatch(/pg_restore/);
    } finally {
      await db.drop();
    }
  });
});
