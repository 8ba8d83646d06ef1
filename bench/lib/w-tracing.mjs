import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { load } from './load.mjs';
import { query } from './pg.mjs';
import { CORES, spawnOn, stop, withCpu } from './proc.mjs';
import { admin, recordData, startSvc } from './svc.mjs';
import { drainWithSvc, seedTemplate } from './w4-deliver.mjs';

const SERVER = fileURLToPath(new URL('../../packages/server/', import.meta.url));
const SINK = fileURLToPath(new URL('./otlp-sink-child.mjs', import.meta.url));
/** The same code bundled with tracing/tracing.ts replaced by an always-off module (build.mjs --without-tracing). */
export const SVC_NOTRACE = join(SERVER, 'dist-notrace', 'svc.mjs');

/**
 * The three sides of W2T and W4T (SPEC §15): `none` a build without tracing, `off` this build with no OTEL_*
 * variable (the shipped default), `on` this build exporting every span (sampler always_on) over OTLP/HTTP protobuf to
 * a collector that takes everything (on the load core).
 */
const SIDES = ['none', 'off', 'on'];

export function buildWithoutTracing(ctx) {
  ctx.progress('W2T/W4T', 'building the bundle without tracing (packages/server/dist-notrace)');
  execFileSync(process.execPath, ['build.mjs', '--without-tracing'], { cwd: SERVER, stdio: 'inherit' });
  if (!existsSync(SVC_NOTRACE)) throw new Error(`${SVC_NOTRACE} was not built`);
}

async function startSink(ctx) {
  const child = spawnOn(CORES.load, [process.execPath, SINK], { ipc: true, logFile: ctx.logFile('otlp-sink') });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.exitPromise.then(() => reject(new Error('the OTLP sink exited')));
  });
  const stats = () => new Promise((resolve) => {
    child.once('message', (m) => resolve(m.stats));
    child.send({ cmd: 'stats' });
  });
  return { url: `http://127.0.0.1:${port}`, stats, stop: () => stop(child) };
}

const sideEnv = (side, sink) =>
  side === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_TRACES_SAMPLER: 'always_on' } : {};
const sideMain = (side) => (side === 'none' ? SVC_NOTRACE : undefined);

function cells(ctx, workload, what, unit, rounds, pick) {
  ctx.ratioCell({ workload, measure: `${what}, tracing off vs a build without tracing, ${unit}`, unit, baseline: rounds.none.map(pick), svc: rounds.off.map(pick), min: 0.95, raw: rounds });
  ctx.ratioCell({ workload, measure: `${what}, tracing on (sampler 1.0, OTLP protobuf) vs off, ${unit}`, unit, baseline: rounds.off.map(pick), svc: rounds.on.map(pick), min: 0.8 });
}

/** W2T: W2's create (SQLite, 1 target, `serve --no-worker`), one server per side, rounds interleaved. */
export async function w2Tracing(ctx) {
  const { opts } = ctx;
  const sink = await startSink(ctx);
  const servers = {};
  try {
    for (const side of SIDES) {
      const svc = await startSvc({ main: sideMain(side), mode: 'api', databaseUrl: `sqlite:${join(ctx.dir(`w2t-${side}`), 'svc.db')}`, tls: ctx.tls, env: sideEnv(side, sink), logFile: ctx.logFile(`W2T-${side}`) });
      const a = await admin(svc.url);
      await a.collection('bench');
      await a.webhook('https://127.0.0.1:9/hook');
      servers[side] = { svc, token: await a.token() };
    }
    const body = JSON.stringify({ data: recordData(1) });
    const target = (side, duration) => ({
      url: `${servers[side].svc.url}/api/v1/collections/bench/records`,
      method: 'POST',
      headers: { authorization: `Bearer ${servers[side].token}`, 'content-type': 'application/json' },
      body,
      connections: opts.connections,
      duration,
    });
    ctx.progress('W2T', `warm-up ${opts.warmup} s per server`);
    for (const side of SIDES) await load(target(side, opts.warmup));
    const rounds = { none: [], off: [], on: [] };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const side of SIDES) {
        const { result: res, cpu } = await withCpu(servers[side].svc.pid, () => load(target(side, opts.duration)));
        res.serverCpu = cpu;
        rounds[side].push(res);
        ctx.progress('W2T', `round ${r}/${opts.rounds} tracing ${side.padEnd(4)} ${Math.round(res.rps)} req/s  p99 ${res.latency.p99} ms  (server CPU ${Math.round(cpu * 100)}%)`);
      }
    }
    const exported = await sink.stats();
    ctx.progress('W2T', `the collector took ${exported.requests} exports, ${(exported.bytes / 1e6).toFixed(1)} MB`);
    cells(ctx, 'W2T', 'create record, 1 target, SQLite', 'req/s', rounds, (x) => x.rps);
  } finally {
    for (const { svc } of Object.values(servers)) await svc.stop();
    await sink.stop();
  }
}

/** Every event of a copy gets a sampled trace context of its own, as if each write had been traced. */
/**
 * Before the clock, on every side's copy: `on` gives each event a sampled traceparent of its own (as if each write had
 * been traced). That update leaves the events table as no write leaves it (SQLite rewrites the rows, PostgreSQL keeps
 * the old versions until a vacuum; a traced write stores its context in its insert), so every side's copy is then
 * vacuumed alike, and the three drain tables of the same layout.
 */
const prepared = (kind, tracedEvents) => async (url) => {
  if (kind === 'pg') {
    if (tracedEvents) await query(url, `update events set traceparent = '00-' || md5(random()::text) || '-' || substr(md5(random()::text), 1, 16) || '-01'`);
    await query(url, 'vacuum analyze events');
    return;
  }
  const db = new Database(url.slice('sqlite:'.length));
  try {
    if (tracedEvents) db.exec(`update events set traceparent = '00-' || lower(hex(randomblob(16))) || '-' || lower(hex(randomblob(8))) || '-01'`);
    db.exec('vacuum');
  } finally {
    db.close();
  }
};

/** W4T: W4's drain (1 `svc worker`, 1 target) of the same copy by each side; `on` drains events written in traces. */
export async function w4Tracing(ctx, receiver, kinds) {
  const { opts } = ctx;
  const sink = await startSink(ctx);
  try {
    for (const kind of kinds) {
      const name = `w4t_${kind}`;
      const tpl = await seedTemplate(ctx, { kind, name, targets: 1, jobs: opts.jobs, receiver });
      const rounds = { none: [], off: [], on: [] };
      for (let r = 1; r <= opts.rounds; r++) {
        for (const side of SIDES) {
          const res = await drainWithSvc(ctx, tpl, receiver, { label: `${name}-${side}`, main: sideMain(side), env: sideEnv(side, sink), prepare: prepared(kind, side === 'on') });
          res.rate = res.count / res.seconds;
          rounds[side].push(res);
          ctx.progress('W4T', `${kind} round ${r}/${opts.rounds} tracing ${side.padEnd(4)} ${Math.round(res.rate)} deliveries/s (${res.count} in ${res.seconds.toFixed(2)} s${Number.isFinite(res.cpuSeconds) ? `, CPU ${Math.round((res.cpuSeconds * 1e6) / res.count)} µs a delivery` : ''})${res.partial ? ` — STOPPED at the ${opts.drainTimeoutMs / 1000} s limit` : ''}`);
        }
      }
      cells(ctx, 'W4T', `drain ${tpl.count} jobs to 1 target, ${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`, 'deliveries/s', rounds, (x) => x.rate);
    }
    const exported = await sink.stats();
    ctx.progress('W4T', `the collector took ${exported.requests} exports, ${(exported.bytes / 1e6).toFixed(1)} MB`);
  } finally {
    await sink.stop();
  }
}
