import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Process placement on a small machine: the measured server (or delivery worker) on one core, the load
 * generator and the webhook receiver on the other, so they do not steal each other's CPU. PostgreSQL's own
 * processes are not pinned (it is a system service).
 */
export const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((p) => existsSync(p)) ?? null;
export const CORES = { server: '0', load: '1' };

export function placement() {
  return TASKSET
    ? `taskset -c ${CORES.server}: svc / baseline servers / delivery workers; taskset -c ${CORES.load}: load generator (autocannon) + HTTPS receiver; PostgreSQL and the harness unpinned`
    : 'taskset not found: processes are not pinned';
}

const children = new Set();

/** Every child this harness starts is tracked, so an interrupted run stops exactly those (by pid). */
export function spawnOn(core, args, { env = {}, logFile = null, ipc = false } = {}) {
  const [cmd, ...rest] = TASKSET && core !== null ? [TASKSET, '-c', core, ...args] : args;
  const out = logFile ? openSync(logFile, 'a') : 'ignore';
  const stdio = ['ignore', out, out];
  if (ipc) stdio.push('ipc');
  const child = spawn(cmd, rest, { env: { ...process.env, ...env }, stdio });
  children.add(child);
  child.exitPromise = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.exitPromise.then(() => children.delete(child));
  return child;
}

/** Like spawnOn, but captures stdout (a child that prints one JSON answer). */
export function runJson(core, args, { env = {}, timeoutMs = 600_000 } = {}) {
  const [cmd, ...rest] = TASKSET && core !== null ? [TASKSET, '-c', core, ...args] : args;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, rest, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(-2000)}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)));
      } catch (e) {
        reject(new Error(`bad JSON from ${args.join(' ')}: ${out.slice(-500)} ${err.slice(-500)}`));
      }
    });
  });
}

export async function stop(child, timeoutMs = 15_000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await child.exitPromise;
  clearTimeout(timer);
}

export function killAll() {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {}
  }
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Polls until `url` answers `status` (bounded by count and time). Returns ms waited. */
export async function waitHttp(url, { timeoutMs = 30_000, intervalMs = 20, status = 200, child = null } = {}) {
  const t0 = performance.now();
  for (let i = 0; i < 100_000 && performance.now() - t0 < timeoutMs; i++) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) throw new Error(`process exited (${child.exitCode ?? child.signalCode}) before ${url} was ready`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === status) return performance.now() - t0;
    } catch {}
    await sleep(intervalMs);
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms`);
}

export function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak. */
export function rssSampler(pid, everyMs = 200) {
  let peak = 0;
  const samples = [];
  const t = setInterval(() => {
    const v = rssMb(pid);
    if (Number.isFinite(v)) {
      samples.push(v);
      peak = Math.max(peak, v);
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(t);
      return { peakMb: peak, samples: samples.length };
    },
  };
}

export const nowNs = () => process.hrtime.bigint();

/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks of 1/100 s). */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Measures a process's CPU use (fraction of one core) over an async operation. */
export async function withCpu(pid, fn) {
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  const result = await fn();
  const cpu = (cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000);
  return { result, cpu };
}
