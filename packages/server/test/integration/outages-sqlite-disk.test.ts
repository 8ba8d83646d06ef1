import { mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fullDiskScenario } from '../helpers/full-disk.js';
import { namespacesAllowed, spawnInNamespace } from '../helpers/mount-namespace.js';
import { serveEnv, startCountingReceiver, status, undoAfterAll } from '../helpers/outage-client.js';
import { exited } from '../helpers/processes.js';
import { freePort } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12 "Outages", from outside, on SQLite: a real `svc serve` whose database lives on a 16 MB tmpfs in a mount
 * namespace of its own. A filler file takes 6 MB first; records of 200 KB (each also in its event) are written until
 * the disk is full, then the filler is deleted from inside the namespace (helpers/full-disk.ts says what is judged);
 * every acknowledged write is delivered to a receiver, the worker's claims and results being writes too.
 */
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

const allowed = namespacesAllowed();

describe('SQLite on a full disk, svc serve on its own small tmpfs', () => {
  const undo = undoAfterAll();

  it.skipIf(!allowed)(
    'writes answer 507 storage_full while the disk is full, reads go on, nothing acknowledged is lost, and writes work again once space is freed',
    async () => {
      const disk = mkdtempSync(join(tmpdir(), 'svc-disk-'));
      undo(() => rmdirSync(disk));
      const side = mkdtempSync(join(tmpdir(), 'svc-disk-side-'));
      undo(() => rmSync(side, { recursive: true, force: true }));
      const hook = await startCountingReceiver(side);
      undo(() => hook.receiver.close());
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
      const svc = spawnInNamespace(
        `mount -t tmpfs -o size=16m tmpfs "$DISK_DIR" && fallocate -l 6m "$DISK_DIR/filler" && exec "$NODE_BIN" --import tsx "$MAIN_TS" serve`,
        { ...clean, DISK_DIR: disk, NODE_BIN: process.execPath, MAIN_TS: MAIN, ...serveEnv(port, `sqlite:${join(disk, 'svc.db')}`), ...hook.env },
      );
      undo(async () => {
        svc.child.kill('SIGTERM');
        await exited(svc.child);
      });
      await waitFor(async () => svc.exit ?? (await status(base, '/readyz').catch(() => ({ status: 0 }))).status === 200, 'svc ready', 60_000, 100);
      expect(svc.exit).toBeNull();

      const figures = await fullDiskScenario({
        base,
        record: (n) => ({ n, blob: 'x'.repeat(200_000) }),
        free: () => {
          const rm = svc.run(['rm', join(disk, 'filler')]);
          expect(rm.status, rm.stderr).toBe(0);
        },
        alive: () => svc.exit === null,
        receiver: hook,
      });
      console.log(`[outages sqlite disk] ${JSON.stringify(figures)}`);
    },
    180_000,
  );
});
