import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Small disks for fault tests: a shell script run in a mount namespace of its own (`unshare -m`), where it mounts
 * tmpfs file systems nobody else sees, then execs the process under test. Filling them fills nothing of the machine,
 * and they vanish with the namespace's last process.
 */

/** Whether this machine lets a test mount a tmpfs in a mount namespace of its own (root, or a user namespace). */
export function namespacesAllowed(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ns-probe-'));
  try {
    return spawnSync('unshare', ['-m', 'sh', '-c', `mount -t tmpfs -o size=1m tmpfs "${dir}" && umount "${dir}"`], { stdio: 'ignore' }).status === 0;
  } finally {
    rmdirSync(dir);
  }
}

export interface NamespacedProcess {
  child: ChildProcess;
  /** Set once the process has exited, with its status and what it wrote to stderr. */
  readonly exit: string | null;
  /** Runs a command inside the namespace (`nsenter`), as an operator on that machine would. */
  run(args: string[]): { status: number | null; stderr: string };
}

/** `script` (sh) in a new mount namespace, with `env`; stdout ignored, stderr kept for the exit report. */
export function spawnInNamespace(script: string, env: Record<string, string | undefined>): NamespacedProcess {
  const child = spawn('unshare', ['-m', 'sh', '-c', script], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exit: string | null = null;
  child.once('exit', (code, signal) => (exit = `exited (${code ?? signal}): ${stderr}`));
  return {
    child,
    get exit() {
      return exit;
    },
    run(args) {
      const r = spawnSync('nsenter', ['-t', String(child.pid), '-m', ...args], { encoding: 'utf8' });
      return { status: r.status, stderr: r.stderr };
    },
  };
}
