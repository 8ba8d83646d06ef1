import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL } from '../helpers/db.js';
import { fullDiskScenario } from '../helpers/full-disk.js';
import { namespacesAllowed, spawnInNamespace } from '../helpers/mount-namespace.js';
import { serveEnv, startCountingReceiver, status, undoAfterAll } from '../helpers/outage-client.js';
import { exited, spawnSvc } from '../helpers/processes.js';
import { freePort } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12's full disk on PostgreSQL (SQLSTATE 53100), for real: a PostgreSQL server of the test's own (initdb, as
 * the machine's `postgres` user) whose data directory is a 40 MB tmpfs in a mount namespace of its own, its WAL on a
 * second, larger one (as with a separate WAL volume: a full WAL disk makes PostgreSQL stop altogether — a PANIC, seen
 * by svc as `unavailable` — while a full data disk fails only the statement that needs room, with 53100). The
 * machine's server, which other tests use, is not touched. `svc serve` runs outside the namespace and reaches it over
 * TCP; an 8 MB filler on the data disk is deleted to free space (helpers/full-disk.ts says what is judged).
 */
function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const found = readdirSync(root)
    .map((v) => join(root, v, 'bin'))
    .find((bin) => existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres')));
  return found ?? null;
}

const bin = postgresBin();
const runnable = Boolean(POSTGRES_URL) && bin !== null && spawnSync('id', ['postgres'], { stdio: 'ignore' }).status === 0 && namespacesAllowed();

describe('PostgreSQL on a full data disk, a server of the test’s own on a small tmpfs', () => {
  const undo = undoAfterAll();

  it.skipIf(!runnable)(
    'writes answer 507 storage_full (53100) while the disk is full, reads go on, nothing acknowledged is lost, and writes work again once space is freed',
    async () => {
      const data = mkdtempSync(join(tmpdir(), 'svc-pgdata-'));
      const wal = mkdtempSync(join(tmpdir(), 'svc-pgwal-'));
      undo(() => {
        rmdirSync(data);
        rmdirSync(wal);
      });
      const pgPort = await freePort();
      const server = spawnInNamespace(
        [
          'mount -t tmpfs -o size=40m tmpfs "$DATA_DIR"',
          'mount -t tmpfs -o size=64m tmpfs "$WAL_DIR"',
          'chown postgres "$DATA_DIR" "$WAL_DIR"',
          'runuser -u postgres -- "$PG_BIN/initdb" -D "$DATA_DIR/data" -X "$WAL_DIR/wal" --wal-segsize=1 -A trust -U postgres --no-sync >/dev/null',
          'fallocate -l 8m "$DATA_DIR/filler"',
          // setpriv execs in place (runuser would stay as a parent that keeps signals from the server).
          'exec setpriv --reuid=postgres --regid=postgres --init-groups "$PG_BIN/postgres" -D "$DATA_DIR/data" -p "$PG_PORT" -k "$DATA_DIR" -c listen_addresses=127.0.0.1 ' +
            '-c fsync=off -c shared_buffers=8MB -c min_wal_size=2MB -c max_wal_size=16MB -c log_min_messages=fatal',
        ].join(' && '),
        { PATH: process.env.PATH, DATA_DIR: data, WAL_DIR: wal, PG_BIN: bin!, PG_PORT: String(pgPort) },
      );
      undo(async () => {
        // A fast shutdown; the namespace and its disks go with its last process.
        server.child.kill('SIGINT');
        await exited(server.child);
      });
      const url = `postgres://postgres@127.0.0.1:${pgPort}/postgres`;
      await waitFor(
        async () => {
          if (server.exit) throw new Error(`the test's PostgreSQL ${server.exit}`);
          const c = new pg.Client({ connectionString: url });
          c.on('error', () => {});
          return c.connect().then(
            () => c.end().then(() => true),
            () => false,
          );
        },
        "the test's own PostgreSQL accepting connections",
        60_000,
        200,
      );

      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const side = mkdtempSync(join(tmpdir(), 'svc-pgdisk-side-'));
      undo(() => rmSync(side, { recursive: true, force: true }));
      const hook = await startCountingReceiver(side);
      undo(() => hook.receiver.close());
      const svc = spawnSvc(['serve'], { ...serveEnv(port, url), ...hook.env });
      let svcExit: string | null = null;
      svc.once('exit', (code, signal) => (svcExit = `svc exited (${code ?? signal})`));
      undo(async () => {
        svc.kill('SIGTERM');
        await exited(svc);
      });
      await waitFor(async () => svcExit ?? (await status(base, '/readyz').catch(() => ({ status: 0 }))).status === 200, 'svc ready', 60_000, 100);
      expect(svcExit).toBeNull();

      const figures = await fullDiskScenario({
        base,
        // Incompressible text: PostgreSQL compresses what it moves out of line, and 'x' repeated would take no room.
        record: (n) => ({ n, blob: randomBytes(150_000).toString('base64') }),
        free: () => {
          const rm = server.run(['rm', join(data, 'filler')]);
          expect(rm.status, rm.stderr).toBe(0);
        },
        alive: () => svcExit === null && server.exit === null,
        receiver: hook,
      });
      console.log(`[outages postgres disk] ${JSON.stringify(figures)}`);
    },
    240_000,
  );
});
