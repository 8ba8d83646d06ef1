import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRecord, expectOutageAnswers, metric, serveEnv, setUp, status, undoAfterAll, type Answer } from '../helpers/outage-client.js';
import { exited } from '../helpers/processes.js';
import { freePort } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12 "Outages", from outside, on SQLite: a real `svc serve` whose database lives on a small tmpfs mounted in a
 * mount namespace of its own (no other process sees it, nothing of the machine fills up). A filler file takes part
 * of the room first; large records are written until the disk is full. Those writes answer 507 `storage_full`
 * (problem+json, Retry-After, X-Request-ID), never 500; reads still answer, /healthz and /readyz 200, the process
 * stays up and nothing acknowledged is lost. The filler is then deleted from inside the namespace (as an operator
 * frees space) and the same process takes large writes again.
 */
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const DISK = '16m';
const FILLER = '6m';

/** Whether this machine lets the test mount a tmpfs in a mount namespace of its own (root, or a user namespace). */
function namespacesAllowed(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ns-probe-'));
  try {
    return spawnSync('unshare', ['-m', 'sh', '-c', `mount -t tmpfs -o size=1m tmpfs "${dir}" && umount "${dir}"`], { stdio: 'ignore' }).status === 0;
  } finally {
    rmdirSync(dir);
  }
}

const allowed = namespacesAllowed();

describe('SQLite on a full disk, svc serve on its own small tmpfs', () => {
  const undo = undoAfterAll();

  it.skipIf(!allowed)(
    'writes answer 507 storage_full while the disk is full, reads go on, nothing acknowledged is lost, and writes work again once space is freed',
    async () => {
      const mountpoint = mkdtempSync(join(tmpdir(), 'svc-disk-'));
      undo(() => rmdirSync(mountpoint));
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
      // The tmpfs exists only in this namespace: the filler takes its part of the room before svc starts.
      const script = `mount -t tmpfs -o size=${DISK} tmpfs "$DISK_DIR" && fallocate -l ${FILLER} "$DISK_DIR/filler" && exec "$NODE_BIN" --import tsx "$MAIN_TS" serve`;
      const child: ChildProcess = spawn('unshare', ['-m', 'sh', '-c', script], {
        env: {
          ...clean,
          DISK_DIR: mountpoint,
          NODE_BIN: process.execPath,
          MAIN_TS: MAIN,
          ...serveEnv(port, `sqlite:${join(mountpoint, 'svc.db')}`),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      let exit: string | null = null;
      child.once('exit', (code, signal) => (exit = `exited (${code ?? signal}): ${stderr}`));
      undo(async () => {
        child.kill('SIGTERM');
        await exited(child);
      });
      await waitFor(async () => exit ?? (await status(base, '/readyz').catch(() => ({ status: 0 }))).status === 200, 'svc ready', 60_000, 100);
      expect(exit).toBeNull();
      const { token } = await setUp(base);

      // Records of 200 KB (each also in its event): the free ~10 MB lasts a few dozen of them.
      let n = 0;
      const big = () => ({ n: n++, blob: 'x'.repeat(200_000) });
      const answers: Answer[] = [];
      let fullInARow = 0;
      while (fullInARow < 3 && answers.length < 300) {
        const a = await createRecord(base, token, big());
        answers.push(a);
        fullInARow = a.status === 507 ? fullInARow + 1 : 0;
      }
      expect(answers.filter((a) => a.status !== 201 && a.status !== 507), 'every write answers 201 or 507: never 500, never a dropped connection').toEqual([]);
      const full = answers.filter((a) => a.status === 507);
      expect(full.length, 'the disk filled up').toBeGreaterThanOrEqual(3);
      expectOutageAnswers(answers, 507, 'storage_full', '30');

      // While full: reads answer, the process is alive and ready (the database answers; it only cannot grow).
      const acknowledged = answers.filter((a) => a.status === 201).map((a) => a.id!);
      expect(acknowledged.length).toBeGreaterThan(0);
      const auth = { authorization: `Bearer ${token}` };
      const one = await fetch(`${base}/api/v1/collections/items/records/${acknowledged[0]}`, { headers: auth });
      expect(one.status).toBe(200);
      await one.text();
      expect((await status(base, '/healthz')).status).toBe(200);
      expect((await status(base, '/readyz')).status).toBe(200);
      expect(await metric(base, 'svc_database_errors_total{kind="storage_full"}')).toBe(full.length);

      // An operator frees space (the filler, inside the namespace): the same process writes again.
      const freed = spawnSync('nsenter', ['-t', String(child.pid), '-m', 'rm', join(mountpoint, 'filler')], { encoding: 'utf8' });
      expect(freed.status, freed.stderr).toBe(0);
      const freedAt = performance.now();
      const after: Answer[] = [];
      await waitFor(
        async () => {
          const a = await createRecord(base, token, big());
          after.push(a);
          return a.status === 201;
        },
        'a large write accepted once space is freed',
        5_000,
        50,
      );
      const backMs = performance.now() - freedAt;
      for (let i = 0; i < 3; i++) after.push(await createRecord(base, token, big()));
      expect(after.filter((a) => a.status !== 201 && a.status !== 507)).toEqual([]);
      expect(after.slice(-3).map((a) => a.status)).toEqual([201, 201, 201]);

      // Nothing acknowledged is lost: every 201 reads back, and the collection holds exactly those.
      const all = [...acknowledged, ...after.filter((a) => a.status === 201).map((a) => a.id!)];
      const listed = new Set<string>();
      for (let cursor: string | null = null, first = true; first || cursor; first = false) {
        const res = await fetch(`${base}/api/v1/collections/items/records?limit=20&fields=n${cursor ? `&cursor=${cursor}` : ''}`, { headers: auth });
        expect(res.status).toBe(200);
        const page = (await res.json()) as { items: Array<{ id: string }>; nextCursor: string | null };
        for (const item of page.items) listed.add(item.id);
        cursor = page.nextCursor;
      }
      expect([...listed].sort()).toEqual([...all].sort());
      expect(exit, 'svc did not exit').toBeNull();
      console.log(`[outages sqlite disk] ${JSON.stringify({ acknowledged: all.length, storageFull: full.length, backMs: Math.round(backMs) })}`);
    },
    180_000,
  );
});
