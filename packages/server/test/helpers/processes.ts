import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Starts `svc <args>` as its own process (from the sources, through tsx), with exactly the given SVC_* environment. */
export function spawnSvc(args: string[], env: Record<string, string>): ChildProcess {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...clean, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d.toString()));
  child.on('exit', (code, signal) => {
    if (code !== 0 && code !== null && signal === null) process.stderr.write(`svc ${args.join(' ')} exited ${code}: ${stderr}\n`);
  });
  return child;
}

export const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
