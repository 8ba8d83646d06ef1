import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { backup, restore } from '../../src/backup.js';
import { loadConfig } from '../../src/config/load.js';
import { createTestContext } from '../helpers/context.js';
import { createTestDatabase } from '../helpers/db.js';
import { namespacesAllowed } from '../helpers/mount-namespace.js';

/**
 * `svc backup` writes its copy as `svc.db.partial` first. That file holds every record and sealed secret from its
 * first page on, in a folder the operator may have made readable by others: it is private (0600) from its creation,
 * not only once the copy is done (a backup killed or failing meanwhile left it world-readable, 0644 under umask 022).
 * What a backup killed part way leaves never stops the next one into that folder, and restore calls it unfinished;
 * one that fills its folder's disk says so and leaves nothing there.
 */
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/**
 * `script` (sh) once a 4 MB tmpfs is mounted on `$DISK` in a mount namespace of its own (helpers/mount-namespace.ts),
 * with `env`, the only SVC_ variables, and `$NODE_BIN` and `$MAIN_TS` to run svc from its sources; to its end.
 */
async function onSmallDisk(script: string, env: Record<string, string> & { DISK: string }): Promise<{ stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
  const child = spawn('unshare', ['-m', 'sh', '-c', `mount -t tmpfs -o size=4m tmpfs "$DISK" && ${script}`], {
    env: { ...clean, ...env, NODE_BIN: process.execPath, MAIN_TS: MAIN },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  await new Promise((r) => child.on('close', r));
  return { stdout, stderr };
}
describe('svc backup’s partial copy (SQLite)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function liveDatabase(key: string): Promise<string> {
    const database = await createTestDatabase('sqlite');
    dirs.push(database.dir);
    const url = database.url;
    // svc migrates it (and stamps the key's fingerprint); then it is closed, as a backup of a stopped svc would find it.
    const t = await createTestContext('sqlite', { SVC_SECRET_KEY: key }, { database });
    await t.ctx.database.close();
    // Enough pages that the backup API copies them in more than one step, with turns of the event loop between.
    const db = new Database(url.slice('sqlite:'.length));
    db.exec(`create table filler (b blob); with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000) insert into filler select randomblob(4000) from n`);
    db.close();
    return url;
  }

  it('is never readable by others while it is written', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-backup-partial-'));
    dirs.push(home);
    const key = randomBytes(32).toString('hex');
    const url = await liveDatabase(key);
    const to = join(home, 'shared');
    mkdirSync(to);
    chmodSync(to, 0o755);
    const partial = join(to, 'svc.db.partial');
    const oldMask = process.umask(0o022);
    const modes = new Set<number>();
    let copying = true;
    const watch = (async () => {
      while (copying) {
        if (existsSync(partial)) modes.add(statSync(partial).mode & 0o777);
        await new Promise((r) => setImmediate(r));
      }
    })();
    try {
      await backup(loadConfig({ SVC_DATABASE_URL: url, SVC_SECRET_KEY: key }), to, () => {});
    } finally {
      copying = false;
      await watch;
      process.umask(oldMask);
    }
    expect(modes.size, 'the partial copy was seen while it was written').toBeGreaterThan(0);
    expect([...modes]).toEqual([0o600]);
    expect(statSync(join(to, 'svc.db')).mode & 0o777).toBe(0o600);
  });

  it('clears what a backup killed in the same folder left: the folder then holds the backup alone', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-backup-partial-'));
    dirs.push(home);
    const key = randomBytes(32).toString('hex');
    const url = await liveDatabase(key);
    const to = join(home, 'again');
    mkdirSync(to);
    // As `kill -9` during the copy left them: the half copy (world-readable then) and its hot rollback journal.
    writeFileSync(join(to, 'svc.db.partial'), randomBytes(65536), { mode: 0o644 });
    writeFileSync(join(to, 'svc.db.partial-journal'), randomBytes(1024), { mode: 0o644 });
    await expect(restore(loadConfig({ SVC_DATABASE_URL: url, SVC_SECRET_KEY: key }), to, () => {})).rejects.toThrow(`${to} holds an unfinished backup`);
    await backup(loadConfig({ SVC_DATABASE_URL: url, SVC_SECRET_KEY: key }), to, () => {});
    expect(readdirSync(to).sort()).toEqual(['backup.json', 'svc-secret.key', 'svc.db']);
    const copy = new Database(join(to, 'svc.db'), { readonly: true });
    expect(copy.pragma('quick_check', { simple: true })).toBe('ok');
    expect(copy.prepare('select count(*) from filler').pluck().get()).toBe(3000);
    copy.close();
  });

  it('replaces a backup killed between renaming its copy into place and writing backup.json; restore calls it unfinished', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-backup-partial-'));
    dirs.push(home);
    const key = randomBytes(32).toString('hex');
    const url = await liveDatabase(key);
    const config = loadConfig({ SVC_DATABASE_URL: url, SVC_SECRET_KEY: key });
    const to = join(home, 'stopped');
    // What `kill -9` between the backup's two renames leaves: the copy as svc.db, its key, the manifest still pending.
    // (Before, the manifest was written only after the rename: svc.db and the key alone, refused by both commands.)
    await backup(config, to, () => {});
    renameSync(join(to, 'backup.json'), join(to, 'backup.json.partial'));
    await expect(restore(config, to, () => {})).rejects.toThrow(`${to} holds an unfinished backup (svc backup was stopped before it wrote backup.json)`);

    const lines: string[] = [];
    await backup(config, to, (line) => lines.push(line));
    expect(lines[0]).toBe(`replacing the unfinished backup in ${to} (stopped before it wrote backup.json)`);
    expect(readdirSync(to).sort()).toEqual(['backup.json', 'svc-secret.key', 'svc.db']);
    const elsewhere = await createTestDatabase('sqlite');
    dirs.push(elsewhere.dir);
    const restored = await restore(loadConfig({ SVC_DATABASE_URL: elsewhere.url, SVC_SECRET_KEY: key }), to, () => {});
    const copy = new Database(restored.database, { readonly: true });
    expect(copy.prepare('select count(*) from filler').pluck().get()).toBe(3000);
    copy.close();
  });

  it('never removes a svc.db that no stopped backup left: the live database’s own folder, or another copy’s', async () => {
    const key = randomBytes(32).toString('hex');
    const url = await liveDatabase(key);
    const config = loadConfig({ SVC_DATABASE_URL: url, SVC_SECRET_KEY: key });
    const live = url.slice('sqlite:'.length);
    const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    const before = sha(live);
    const liveFolder = join(live, '..');
    await expect(backup(config, liveFolder, () => {})).rejects.toThrow(`${liveFolder} is the live database's own folder`);
    expect(sha(live)).toBe(before);

    // A pending manifest beside a svc.db that is not the copy it describes proves nothing about that svc.db.
    const home = mkdtempSync(join(tmpdir(), 'svc-backup-partial-'));
    dirs.push(home);
    const to = join(home, 'other');
    await backup(config, to, () => {});
    renameSync(join(to, 'backup.json'), join(to, 'backup.json.partial'));
    writeFileSync(join(to, 'svc.db'), randomBytes(65536));
    const other = sha(join(to, 'svc.db'));
    await expect(backup(config, to, () => {})).rejects.toThrow('already holds a svc.db that no backup there finished');
    expect(sha(join(to, 'svc.db'))).toBe(other);
  });

  it.skipIf(!namespacesAllowed())('restore: a copy that fails part way (a full disk) leaves the database in place, and no partial copy', async () => {
    const key = randomBytes(32).toString('hex');
    const url = await liveDatabase(key);
    const home = mkdtempSync(join(tmpdir(), 'svc-restore-disk-'));
    dirs.push(home);
    const from = join(home, 'nightly');
    await backup(loadConfig({ SVC_DATABASE_URL: url, SVC_SECRET_KEY: key }), from, () => {});
    // The database restored over: a small one (svc's tables alone) on a 4 MB tmpfs, which the ~12 MB copy fills.
    const small = await createTestDatabase('sqlite');
    dirs.push(small.dir);
    await (await createTestContext('sqlite', { SVC_SECRET_KEY: key }, { database: small })).ctx.database.close();
    const smallFile = small.url.slice('sqlite:'.length);
    // In rollback-journal mode already, as restore leaves a database it checked: its bytes are then what restore finds.
    const db = new Database(smallFile);
    db.pragma('journal_mode = DELETE');
    db.close();
    const before = createHash('sha256').update(readFileSync(smallFile)).digest('hex');
    const disk = join(home, 'disk');
    mkdirSync(disk);
    const { stdout, stderr } = await onSmallDisk(
      'cp "$SMALL" "$DISK/svc.db" && { "$NODE_BIN" --import tsx "$MAIN_TS" restore --from "$FROM"; echo "exit $?"; ls -A "$DISK"; sha256sum "$DISK/svc.db"; }',
      { DISK: disk, SMALL: smallFile, FROM: from, SVC_DATABASE_URL: `sqlite:${join(disk, 'svc.db')}`, SVC_SECRET_KEY: key },
    );
    expect(stderr).toContain('ENOSPC');
    // Before: svc.db.before-restore-… and the partial svc.db.restoring, and no svc.db (sha256sum: no such file).
    expect(stdout).toBe(`exit 1\nsvc.db\n${before}  ${join(disk, 'svc.db')}\n`);
  }, 60_000);

  it.skipIf(!namespacesAllowed())('on a full disk, names the backup folder’s file system, what it has free and what the copy needs', async () => {
    const key = randomBytes(32).toString('hex');
    const url = await liveDatabase(key);
    // A 4 MB tmpfs for a ~12 MB database.
    const disk = mkdtempSync(join(tmpdir(), 'svc-backup-disk-'));
    dirs.push(disk);
    const to = join(disk, 'nightly');
    const { stdout, stderr } = await onSmallDisk('{ "$NODE_BIN" --import tsx "$MAIN_TS" backup --to "$TO"; echo "exit $?"; ls -A "$TO"; }', {
      DISK: disk,
      TO: to,
      SVC_DATABASE_URL: url,
      SVC_SECRET_KEY: key,
    });
    // Before: "svc: database or disk is full", which names neither the database nor the backup's folder.
    expect(stderr).toMatch(
      new RegExp(`svc: the file system of ${to}, the backup's folder, is full: the copy needs about 1\\d\\.\\d MB \\(the database's size\\); without it the file system has \\d\\.\\d MB free of 4\\.0 MB\\.`),
    );
    // The command failed and the folder on the full disk holds nothing of it (ls printed no file).
    expect(stdout).toBe('exit 1\n');
  }, 60_000);
});
