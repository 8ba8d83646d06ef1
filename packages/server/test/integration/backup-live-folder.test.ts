import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestContext } from '../helpers/context.js';
import { createTestDatabase } from '../helpers/db.js';
import { svc } from '../helpers/svc-command.js';

/**
 * `svc backup --to` the live database's own folder, or `svc restore --from` it, is refused before anything is written.
 * A backup there rewrote `svc-secret.key`, the key svc reads, by truncating it first (killed in between, every sealed
 * secret unreadable); a restore from there moved aside the very database it then failed to copy, leaving none in place.
 * The folder is compared by its real path: a symlink to it, or `dir/` and `dir/.`, is the same folder.
 */
describe('svc backup and restore refuse the live database’s own folder (SQLite)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

  /** A migrated database in a folder of its own, named `name`, with its key in the key file beside it. */
  async function liveDatabase(name: string): Promise<{ folder: string; file: string; key: string; env: Record<string, string> }> {
    const key = randomBytes(32).toString('hex');
    const database = await createTestDatabase('sqlite');
    dirs.push(database.dir);
    const t = await createTestContext('sqlite', { SVC_SECRET_KEY: key }, { database });
    await t.ctx.database.close();
    const file = join(database.dir, name);
    if (name !== 'svc.db') renameSync(join(database.dir, 'svc.db'), file);
    writeFileSync(join(database.dir, 'svc-secret.key'), `${key}\n`, { mode: 0o600 });
    return { folder: database.dir, file, key, env: { SVC_DATABASE_URL: `sqlite:${file}` } };
  }

  it('backup: refuses the folder of a database of another name (no svc.db there), however the folder is spelled', async () => {
    const live = await liveDatabase('prod.db');
    const before = readdirSync(live.folder).sort();
    const link = join(mkdtempSync(join(tmpdir(), 'svc-backup-link-')), 'data');
    dirs.push(join(link, '..'));
    symlinkSync(live.folder, link);
    // Before: the first of these wrote svc.db, backup.json and the key file again into the live folder, exit 0.
    for (const to of [live.folder, `${live.folder}/`, `${live.folder}/.`, link, `${link}/`]) {
      const res = await svc(['backup', '--to', to], live.env);
      expect(res.stderr).toBe(`svc: ${to.replace(/\/\.?$/, '')} is the live database's own folder (${live.file}, its key file beside it): a backup there would rewrite the key svc reads. Back up to another folder\n`);
      expect(res.code).toBe(1);
      expect(readdirSync(live.folder).sort()).toEqual(before);
      expect(readFileSync(join(live.folder, 'svc-secret.key'), 'utf8')).toBe(`${live.key}\n`);
    }
  }, 60_000);

  it('backup: refuses a folder whose svc-secret.key is the live key file (the live one a symlink to it)', async () => {
    const live = await liveDatabase('svc.db');
    const keys = mkdtempSync(join(tmpdir(), 'svc-keys-'));
    dirs.push(keys);
    renameSync(join(live.folder, 'svc-secret.key'), join(keys, 'svc-secret.key'));
    symlinkSync(join(keys, 'svc-secret.key'), join(live.folder, 'svc-secret.key'));
    const res = await svc(['backup', '--to', keys], live.env);
    expect(res.stderr).toContain(`svc: ${keys} is the live database's own folder`);
    expect(res.code).toBe(1);
    expect(readdirSync(keys)).toEqual(['svc-secret.key']);
    expect(readFileSync(join(keys, 'svc-secret.key'), 'utf8')).toBe(`${live.key}\n`);
    // Another folder is still fine.
    const elsewhere = join(keys, 'nightly');
    const made = await svc(['backup', '--to', elsewhere], live.env);
    expect(made.code, made.stderr).toBe(0);
    expect(readdirSync(elsewhere).sort()).toEqual(['backup.json', 'svc-secret.key', 'svc.db']);
  }, 60_000);

  it('restore: refuses a backup folder that is the configured database’s own, and moves nothing aside', async () => {
    // A database run from a backup's folder (svc pointed at its svc.db), as an operator may do to look at a backup.
    const first = await liveDatabase('svc.db');
    const home = mkdtempSync(join(tmpdir(), 'svc-backup-'));
    dirs.push(home);
    const folder = join(home, 'nightly');
    expect((await svc(['backup', '--to', folder], first.env)).code).toBe(0);
    const env = { SVC_DATABASE_URL: `sqlite:${join(folder, 'svc.db')}` };
    const before = sha(join(folder, 'svc.db'));
    symlinkSync(folder, join(home, 'link'));
    for (const from of [folder, `${folder}/`, join(home, 'link')]) {
      const res = await svc(['restore', '--from', from], env);
      // Before: svc.db was moved to svc.db.before-restore-…, then copying it failed (ENOENT): no database in place.
      expect(res.stderr).toBe(
        `svc: ${from.replace(/\/$/, '')} is the configured database's own folder (${join(folder, 'svc.db')}): restoring from it would move aside or overwrite the files it copies from. Copy the backup folder elsewhere and restore from there\n`,
      );
      expect(res.code).toBe(1);
      expect(readdirSync(folder).sort()).toEqual(['backup.json', 'svc-secret.key', 'svc.db']);
      expect(sha(join(folder, 'svc.db'))).toBe(before);
      expect(existsSync(join(folder, 'svc-secret.key'))).toBe(true);
    }
  }, 60_000);
});
