import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openContext } from '../../src/runtime.js';

// SQLite only: PostgreSQL keeps its files itself. The database, its WAL and shared-memory files and the key file
// hold every record and secret: readable by svc's user alone, whatever the umask, in a folder only it can enter.
describe('SQLite files are private to svc (sqlite)', () => {
  let dir = '';
  let previousUmask = 0;
  afterEach(() => {
    process.umask(previousUmask);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the database folder svc creates is 0700; the database, -wal, -shm and key files are 0600', async () => {
    // The usual umask, which leaves files world-readable unless svc says otherwise.
    previousUmask = process.umask(0o022);
    dir = mkdtempSync(join(tmpdir(), 'svc-files-'));
    const data = join(dir, 'data', 'nested');
    const config = loadConfig({ SVC_DATABASE_URL: `sqlite:${join(data, 'svc.db')}`, SVC_PORT: '0' });
    const ctx = await openContext(config, { logger: pino({ level: 'silent' }) });
    try {
      await ctx.database.write((trx) => trx.insertInto('svc_meta').values({ key: 'file-modes', value: 'x' }).execute());
      const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
      expect(mode(join(dir, 'data'))).toBe('700');
      expect(mode(data)).toBe('700');
      for (const file of ['svc.db', 'svc.db-wal', 'svc.db-shm', 'svc-secret.key']) expect(mode(join(data, file)), file).toBe('600');
    } finally {
      await ctx.database.close();
    }
  });
});
