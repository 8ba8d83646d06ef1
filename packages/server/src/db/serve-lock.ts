import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import SQLite from 'better-sqlite3';

/**
 * One `svc serve` per SQLite database file. What an API process keeps for itself — the schema-change lock of a
 * collection, its wake-ups, its caches of targets, tokens and collections — is shared between API processes only on
 * PostgreSQL (an advisory lock, LISTEN/NOTIFY, versions checked in the database). Two `svc serve` on one SQLite file
 * would each believe they are alone: two schema changes of one collection could both pass (a field marked `indexed`
 * with no index). `svc worker` processes beside the one serve are supported, and one-shot commands too: neither takes
 * this lock.
 *
 * The lock is SQLite's own, so the operating system's (a POSIX lock): an exclusive transaction, never committed, on an
 * empty SQLite file of its own beside the database (`<database>-serve.lock`), held until the process ends. A process
 * that dies, even by SIGKILL, lets go of it with its last descriptor, so a restart after a crash starts at once and no
 * stale file ever needs deleting by hand (the file stays, like `-wal`, `-shm` and `-migrate-lock`, and is empty).
 * Its journal is kept in memory: nothing is ever written, and no `-journal` file is left behind by a kill.
 *
 * Nothing else in the process may open that file: closing any descriptor of a file drops every POSIX lock the process
 * holds on it.
 */

export class ServeLockedError extends Error {
  override name = 'ServeLockedError';
}

/** Held for the life of the process: a connection that is collected is closed, and its lock with it. */
let held: { file: string; lock: SQLite.Database } | null = null;

/** The lock file of a database: beside the file the path leads to (a symbolic link is followed), so every path to one database meets the same lock. */
export function serveLockFile(database: string): string {
  mkdirSync(dirname(database), { recursive: true, mode: 0o700 });
  const real = existsSync(database) ? realpathSync(database) : join(realpathSync(dirname(database)), basename(database));
  return `${real}-serve.lock`;
}

/**
 * Takes the serve lock of the SQLite database at `database` (an absolute path, not `:memory:`) for the life of the
 * process, or throws ServeLockedError naming the database, the process that holds it (where the system tells) and what
 * to do instead. Does not wait: a serve that is still stopping holds it until it has exited.
 */
export function takeServeLock(database: string): void {
  const file = serveLockFile(database);
  if (held?.file === file) return;
  try {
    // 0600 like the database: the folder may be shared, and the file tells nothing but that a serve runs.
    closeSync(openSync(file, constants.O_RDWR | constants.O_CREAT, 0o600));
  } catch (err) {
    throw new Error(`svc serve could not make its lock file ${file} (${(err as Error).message}): svc serve needs to write in the database's folder, as SQLite does for its -wal and -shm files`);
  }
  const lock = new SQLite(file, { timeout: 0 });
  try {
    lock.pragma('journal_mode = MEMORY');
    lock.exec('begin exclusive');
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    const pid = lockHolder(file);
    throw new ServeLockedError(
      `${database} is in use by another svc serve (${pid === null ? `find it with: fuser ${file}` : `pid ${pid}`}; it holds ${file}): ` +
        'on SQLite one svc serve runs per database file. Stop that one first; for more delivery workers run svc worker beside it; ' +
        'for several API processes use PostgreSQL (docs/production.md)',
    );
  }
  held = { file, lock };
}

/**
 * The process holding a POSIX write lock on `file`, from /proc/locks (Linux; in this process's PID namespace): null
 * where the system does not say, or says nothing unambiguous.
 */
function lockHolder(file: string): number | null {
  let text: string;
  let ino: number;
  let dev: number;
  try {
    text = readFileSync('/proc/locks', 'utf8');
    ({ ino, dev } = statSync(file));
  } catch {
    return null;
  }
  // Linux's encoding of a device number, as /proc/locks prints it: major:minor in hexadecimal.
  const device = `${((dev >> 8) & 0xfff).toString(16).padStart(2, '0')}:${((dev & 0xff) | ((dev >> 12) & 0xfff00)).toString(16).padStart(2, '0')}`;
  const holders = (sameDevice: boolean) => {
    const pids = new Set<number>();
    for (const line of text.split('\n')) {
      // "1: POSIX  ADVISORY  WRITE 11643 fe:00:2171273 1073741824 1073742335"; a "->" line is a process waiting.
      const m = /^\d+: POSIX\s+ADVISORY\s+WRITE\s+(\d+)\s+([0-9a-f]+:[0-9a-f]+):(\d+)\s/.exec(line);
      if (!m || Number(m[3]) !== ino || (sameDevice && m[2] !== device)) continue;
      const pid = Number(m[1]);
      if (pid > 0 && pid !== process.pid) pids.add(pid);
    }
    return pids;
  };
  // Some file systems (overlayfs) show the lock on another device than stat says: then the inode alone, if it names one process.
  const pids = holders(true).size > 0 ? holders(true) : holders(false);
  return pids.size === 1 ? [...pids][0]! : null;
}
