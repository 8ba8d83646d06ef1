import { createHash } from 'node:crypto';
import { chmodSync, closeSync, constants, copyFileSync, createReadStream, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statfsSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { Config } from './config/schema.js';
import { sqlitePath } from './db/connect.js';
import { ALL_MIGRATIONS } from './db/migrate.js';
import { systemClock, type Clock } from './lib/clock.js';
import { SecretBox } from './lib/crypto.js';

/**
 * `svc backup` and `svc restore` (SPEC §16). A backup is a folder: `svc.db` (a consistent copy of the live SQLite
 * database, made with SQLite's online backup API while `serve` keeps writing), `svc-secret.key` (the key that opens
 * its webhook secrets: a database without its key delivers nothing) and `backup.json` (what they are). Either half
 * alone is useless, so they travel together.
 */
export const BACKUP_DATABASE = 'svc.db';
export const BACKUP_KEY = 'svc-secret.key';
export const BACKUP_MANIFEST = 'backup.json';

export class BackupError extends Error {
  override name = 'BackupError';
}

export interface Manifest {
  format: 1;
  createdAt: string;
  database: { file: string; bytes: number; sha256: string; migrations: string[] };
  key: { file: string; fingerprint: string };
}

const POSTGRES_BACKUP =
  'svc backup copies the embedded SQLite database; this one is PostgreSQL. Back it up with pg_dump ' +
  '(pg_dump --format=custom --file=svc.dump "$SVC_DATABASE_URL") and keep SVC_SECRET_KEY with the dump: without that key ' +
  'every webhook secret in it is unreadable. See docs/production.md.';
const POSTGRES_RESTORE =
  'svc restore restores an embedded SQLite database; this one is PostgreSQL. Restore a pg_dump with pg_restore ' +
  '(pg_restore --clean --if-exists --dbname="$SVC_DATABASE_URL" svc.dump) and start svc with the SVC_SECRET_KEY the dump was made with. See docs/production.md.';

function databaseFile(config: Config, postgresMessage: string): string {
  const path = sqlitePath(config.databaseUrl);
  if (path === null) throw new BackupError(postgresMessage);
  if (path === ':memory:') throw new BackupError('an in-memory database has nothing to back up or restore');
  return path;
}

/** The key as svc would use it with this database: SVC_SECRET_KEY, else the key file beside it. Never made here. */
function currentKey(config: Config, path: string): string {
  if (config.secretKey) return config.secretKey;
  const file = join(dirname(path), BACKUP_KEY);
  if (!existsSync(file)) throw new BackupError(`no SVC_SECRET_KEY and no key file ${file}: the database's secrets could not be opened, so a backup of it would be useless`);
  return readFileSync(file, 'utf8').trim().toLowerCase();
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Checks a database file and that `key` is the one it was written with; returns its applied migrations. */
function checkDatabase(file: string, key: string): string[] {
  // A database in WAL mode (a backup made before backups were written as one file) gets -wal and -shm files when it
  // is opened, even read-only: the ones this makes are removed, so a backup's folder holds what its manifest lists;
  // only while the log is empty (nothing else opened the file meanwhile and wrote to it).
  const made = existsSync(`${file}-wal`) ? [] : [`${file}-wal`, `${file}-shm`].filter((f) => !existsSync(f));
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BackupError(`${file} is damaged (quick_check: ${String(check)})`);
    const stored = db.prepare(`select value from svc_meta where key = 'secret_key_fingerprint'`).pluck().get() as string | undefined;
    if (stored !== undefined && stored !== new SecretBox(key).fingerprint()) {
      throw new BackupError(`the key does not open ${file}'s secrets (its fingerprint differs): a backup needs the key the database was written with`);
    }
    return (db.prepare('select name from svc_migrations order by name').pluck().all() as string[]);
  } finally {
    db.close();
    if (made.length > 0 && (!existsSync(made[0]!) || statSync(made[0]!).size === 0)) for (const f of made) rmSync(f, { force: true });
  }
}

/** `file` through its symlinks and spellings (`./data`, `data/`), or null when it does not exist. */
function realOrNull(file: string): string | null {
  try {
    return realpathSync(file);
  } catch {
    return null;
  }
}

/**
 * Refuses a backup folder that is also where the configured database lives, or whose key file is the live key file:
 * writing the backup's `svc-secret.key` there truncates the key svc reads before rewriting it (a kill in between
 * leaves every sealed secret unreadable), and restoring from there moves aside the very database it copies from.
 * Both the folder named in the URL and the database's real folder count (the URL may name a symlink).
 */
function refuseLiveFolder(path: string, dir: string, keyFileInDir: string, refusal: string): void {
  const here = realOrNull(dir);
  if (here === null) return;
  const liveKey = realOrNull(join(dirname(path), BACKUP_KEY));
  const realDatabase = realOrNull(path);
  const liveFolders = [realOrNull(dirname(path)), realDatabase === null ? null : dirname(realDatabase)];
  if (liveFolders.includes(here) || (liveKey !== null && realOrNull(join(dir, keyFileInDir)) === liveKey)) throw new BackupError(refusal);
}

/**
 * A backup's steps, in the order that makes each state a kill can leave recognizable: the copy is made and checked as
 * `svc.db.partial`; the key and the manifest are written (the manifest as `backup.json.partial`, made from the
 * checked copy); the copy is renamed to `svc.db`; then the manifest to `backup.json`, which alone says the backup is
 * finished. A folder holding `svc.db` with `backup.json.partial` beside it, and that manifest's sha256 for it, was
 * left by a backup stopped between its two renames: the next backup there replaces it, restore calls it unfinished.
 * A `svc.db` without that proof (a live database's folder, `./data` by default) is never removed.
 */
const PENDING_MANIFEST = `${BACKUP_MANIFEST}.partial`;

/** Whether `dir`'s svc.db is the copy a backup stopped between its renames made (its pending manifest's sha256). */
async function leftByStoppedBackup(dir: string): Promise<boolean> {
  try {
    const pending = JSON.parse(readFileSync(join(dir, PENDING_MANIFEST), 'utf8')) as Manifest;
    return pending.database.sha256 === (await sha256File(join(dir, BACKUP_DATABASE)));
  } catch {
    return false;
  }
}

/**
 * `text` in a file of mode 0600 (whatever was there, and its mode), on disk before the renames that finish the backup:
 * otherwise a crash of the machine could leave a finished-looking backup whose key or manifest is empty.
 */
function writeDurably(file: string, text: string): void {
  const fd = openSync(file, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(file, 0o600);
}

/**
 * A full disk said in terms of the backup: SQLite's "database or disk is full" names neither side. The source is
 * only read (the online backup API writes nothing beside it), so what filled is the folder's file system; it is
 * named with what the copy needs against what it has free once the partial copy is gone (SQLite has already rolled
 * a failed step back: at the failure the folder's 4 MB tmpfs of the test showed 4.0 MB free too).
 */
function whenFull(err: unknown, dir: string, databaseBytes: number): unknown {
  const code = (err as { code?: string }).code ?? '';
  if (!code.startsWith('SQLITE_FULL') && code !== 'ENOSPC' && code !== 'EDQUOT') return err;
  const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;
  let free = '';
  try {
    const fs = statfsSync(dir);
    free = `; without it the file system has ${mb(fs.bavail * fs.bsize)} free of ${mb(fs.blocks * fs.bsize)}`;
  } catch {
    // The figures only help; the message stands without them.
  }
  return new BackupError(
    `the file system of ${dir}, the backup's folder, is full: the copy needs about ${mb(databaseBytes)} (the database's size)${free}. ` +
      'The partial copy was removed; free space there or back up to another folder.',
  );
}

/**
 * Copies the live database into `dir` (made if missing; a folder holding a finished backup, or a svc.db that no
 * stopped backup left, is refused, never overwritten). The copy is consistent: SQLite's online backup API, with every page after the first step copied in
 * one step, under one read transaction (in WAL mode a reader never blocks `serve`'s writes; copying in small steps
 * would start over at each write of another process and, under steady writes, never end).
 */
export async function backup(config: Config, dir: string, progress: (line: string) => void, clock: Clock = systemClock): Promise<Manifest> {
  const path = databaseFile(config, POSTGRES_BACKUP);
  if (!existsSync(path)) throw new BackupError(`no database at ${path}`);
  refuseLiveFolder(path, dir, BACKUP_KEY,
    `${dir} is the live database's own folder (${path}, its key file beside it): a backup there would rewrite the key svc reads. Back up to another folder`);
  const key = currentKey(config, path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, BACKUP_DATABASE);
  const manifestFile = join(dir, BACKUP_MANIFEST);
  if (existsSync(manifestFile)) throw new BackupError(`${dir} already holds a backup; choose another folder`);
  if (existsSync(target)) {
    if (!(await leftByStoppedBackup(dir))) {
      throw new BackupError(`${dir} already holds a ${BACKUP_DATABASE} that no backup there finished (no ${BACKUP_MANIFEST}); choose another folder`);
    }
    progress(`replacing the unfinished backup in ${dir} (stopped before it wrote ${BACKUP_MANIFEST})`);
    rmSync(target);
  }
  const partial = `${target}.partial`;
  const pending = join(dir, PENDING_MANIFEST);
  // What a backup killed or failed here left (the copy and its rollback journal) goes; the copy is made private before
  // its first page is written, whatever the umask and the folder's mode: it holds every record and sealed secret.
  const discard = () => {
    for (const f of [partial, `${partial}-journal`, pending]) rmSync(f, { force: true });
  };
  discard();
  const databaseBytes = statSync(path).size;
  let manifest: Manifest;
  try {
    closeSync(openSync(partial, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600));
    chmodSync(partial, 0o600);
    const source = new SQLite(path, { readonly: true, fileMustExist: true });
    try {
      source.pragma('busy_timeout = 5000');
      progress(`copying ${path} (${(databaseBytes / 1048576).toFixed(1)} MB before its write-ahead log)…`);
      await source.backup(partial, { progress: ({ remainingPages }) => Math.max(remainingPages, 1) });
    } finally {
      source.close();
    }
    // The copy has the source's WAL flag; as one file in rollback-journal mode it opens (to check it, to restore it)
    // without making -wal and -shm files beside it. svc turns WAL on again when it opens the restored database.
    chmodSync(partial, 0o600);
    const copy = new SQLite(partial, { fileMustExist: true });
    try {
      const mode = String(copy.pragma('journal_mode = DELETE', { simple: true })).toLowerCase();
      if (mode !== 'delete') throw new BackupError(`${partial} stayed in ${mode} mode; the backup would not be one file`);
    } finally {
      copy.close();
    }
    const migrations = checkDatabase(partial, key);
    writeDurably(join(dir, BACKUP_KEY), `${key}\n`);
    manifest = {
      format: 1,
      createdAt: new Date(clock.now()).toISOString(),
      database: { file: BACKUP_DATABASE, bytes: statSync(partial).size, sha256: await sha256File(partial), migrations },
      key: { file: BACKUP_KEY, fingerprint: new SecretBox(key).fingerprint() },
    };
    writeDurably(pending, `${JSON.stringify(manifest, null, 2)}\n`);
  } catch (err) {
    discard();
    throw whenFull(err, dir, databaseBytes);
  }
  // From here a failure leaves svc.db with its pending manifest: the state the next backup recognizes and replaces.
  renameSync(partial, target);
  renameSync(pending, manifestFile);
  const folder = openSync(dir, 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
  return manifest;
}

/**
 * Whether some process has the database open. Leaving WAL mode needs the only connection to it: SQLite refuses
 * (busy) while any other holds it, `serve` and `worker` included, whether or not they are writing this instant.
 * Otherwise the file is left in rollback-journal mode with its log folded in: one file, safe to move aside.
 */
function heldByAnotherProcess(path: string): boolean {
  const db = new SQLite(path, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 0');
    const mode = db.pragma('journal_mode = DELETE', { simple: true });
    return String(mode).toLowerCase() === 'wal';
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY') || (err as { code?: string }).code?.startsWith('SQLITE_LOCKED')) return true;
    throw err;
  } finally {
    db.close();
  }
}

export interface Restored {
  database: string;
  key: string | null;
  movedAside: string[];
  manifest: Manifest;
}

/**
 * Puts a backup in place of the configured database. Refused while a process holds that database; a database (and a
 * key file) already there is moved aside, never deleted. With SVC_SECRET_KEY set it must be the backup's key; without
 * it the backup's key file goes beside the database, where svc reads it.
 */
export async function restore(config: Config, dir: string, progress: (line: string) => void, clock: Clock = systemClock): Promise<Restored> {
  const path = databaseFile(config, POSTGRES_RESTORE);
  const manifestFile = join(dir, BACKUP_MANIFEST);
  if (!existsSync(manifestFile)) {
    if (existsSync(join(dir, PENDING_MANIFEST)) || existsSync(join(dir, `${BACKUP_DATABASE}.partial`))) {
      throw new BackupError(`${dir} holds an unfinished backup (svc backup was stopped before it wrote ${BACKUP_MANIFEST}): run svc backup --to ${dir} again, or restore another backup`);
    }
    throw new BackupError(`${dir} holds no backup (no ${BACKUP_MANIFEST})`);
  }
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  refuseLiveFolder(path, dir, manifest.key.file,
    `${dir} is the configured database's own folder (${path}): restoring from it would move aside or overwrite the files it copies from. Copy the backup folder elsewhere and restore from there`);
  const source = join(dir, manifest.database.file);
  const key = readFileSync(join(dir, manifest.key.file), 'utf8').trim().toLowerCase();
  if (new SecretBox(key).fingerprint() !== manifest.key.fingerprint) throw new BackupError(`${join(dir, manifest.key.file)} is not the key this backup was made with`);
  if ((await sha256File(source)) !== manifest.database.sha256) throw new BackupError(`${source} differs from the copy the backup made (sha256): it was changed or damaged`);
  const migrations = checkDatabase(source, key);
  const unknown = migrations.filter((m) => !ALL_MIGRATIONS.includes(m));
  if (unknown.length > 0) throw new BackupError(`the backup was made by a newer svc (migrations ${unknown.join(', ')}): restore it with that version`);
  if (config.secretKey && config.secretKey !== key) {
    throw new BackupError(`SVC_SECRET_KEY is not the backup's key: svc would refuse to start on the restored database. Set it to the key in ${join(dir, manifest.key.file)}`);
  }

  const movedAside: string[] = [];
  const stamp = new Date(clock.now()).toISOString().replace(/[:.]/g, '-');
  // What was there keeps its name until the rename that puts the restored file in its place: a second name (a hard
  // link) is made for it first, so no moment leaves the database or its key missing. A file system without hard links
  // gets a rename, and a window of one rename.
  const keepAside = (file: string) => {
    const to = `${file}.before-restore-${stamp}`;
    try {
      linkSync(file, to);
    } catch {
      renameSync(file, to);
    }
    movedAside.push(to);
  };
  const refuseIfHeld = () => {
    if (existsSync(path) && heldByAnotherProcess(path)) throw new BackupError(`a running svc holds ${path}: stop every serve and worker on it, then restore`);
  };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  refuseIfHeld();
  // The copy is made beside the database before anything of it moves: a restore that fails or is stopped while it
  // copies (a full disk, Ctrl-C) leaves the database as it was. Before, the database was moved aside first: stopped
  // during the copy, svc restore left none, and the next start made an empty one and served it.
  const partial = `${path}.restoring`;
  progress(`copying ${source} to ${path}…`);
  try {
    copyFileSync(source, partial);
    chmodSync(partial, 0o600);
    // A svc started while it copied.
    refuseIfHeld();
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  if (existsSync(path)) keepAside(path);
  // Leftovers of a database that is gone would be read as its log by the restored one.
  for (const leftover of [`${path}-wal`, `${path}-shm`, `${path}-journal`]) rmSync(leftover, { force: true });
  renameSync(partial, path);

  let keyFile: string | null = null;
  if (!config.secretKey) {
    keyFile = join(dirname(path), BACKUP_KEY);
    const there = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim().toLowerCase() : null;
    if (there !== key) {
      writeDurably(`${keyFile}.restoring`, `${key}\n`);
      if (there !== null) keepAside(keyFile);
      renameSync(`${keyFile}.restoring`, keyFile);
    }
  }
  return { database: path, key: keyFile, movedAside, manifest };
}
