#!/usr/bin/env node
// svc benchmark suite: `npm run bench` (full, ~12 min) or `npm run bench -- --quick` (W1, W2, W4, one short round).
// Every figure is compared with a baseline measured in the same run on the same machine; see bench/README.md.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { dropAll, pgAvailable } from './lib/pg.mjs';
import { killAll, placement } from './lib/proc.mjs';
import { startReceiver } from './lib/receiver.mjs';
import { makeCells, table, updateReadme } from './lib/report.mjs';
import { SVC_MAIN } from './lib/svc.mjs';
import { makeTls } from './lib/tls.mjs';
import { w1 } from './lib/w1-list.mjs';
import { w1Floor } from './lib/w1-floor.mjs';
import { createWorkload } from './lib/w2-create.mjs';
import { w4, w7 } from './lib/w4-deliver.mjs';
import { w5 } from './lib/w5-graphile.mjs';
import { w6 } from './lib/w6-latency.mjs';
import { w8 } from './lib/w8-footprint.mjs';
import { w9 } from './lib/w9-feed.mjs';
import { w10 } from './lib/w10-stream.mjs';
import { w12 } from './lib/w12-batch.mjs';
import { w4Limited } from './lib/w4-limited.mjs';
import { w4Scheme } from './lib/w4-scheme.mjs';
import { w15 } from './lib/w15-brokers.mjs';
import { w4Ordered } from './lib/w4-ordered.mjs';
import { w11 } from './lib/w11-query.mjs';
import { w13 } from './lib/w13-soak.mjs';
import { w14 } from './lib/w14-heavy.mjs';
import { buildWithoutTracing, w2Tracing, w4Tracing } from './lib/w-tracing.mjs';
import { profileRun } from './lib/profile-run.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BENCH = fileURLToPath(new URL('.', import.meta.url));

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    jobs: { type: 'string' },
    'w6-rate': { type: 'string' },
    'w11-records': { type: 'string' },
    'w13-history': { type: 'string' },
    'w13-seconds': { type: 'string' },
    'w13-rate': { type: 'string' },
    'w13-parts': { type: 'string' },
    w4: { type: 'string' },
    logs: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    readme: { type: 'boolean' },
    profile: { type: 'boolean', default: false },
    'feed-events': { type: 'string' },
    'stream-clients': { type: 'string' },
    'stream-seconds': { type: 'string' },
    'stream-rate': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(`usage: npm run bench -- [--quick] [--only W1,W4,…] [--rounds N] [--duration S] [--jobs N] [--logs] [--keep] [--readme|--no-readme]
  --quick     one short round of W1, W2, W4 (SQLite, 1 target), under two minutes
  --only      run these workloads (W1…W15, W1F, W4O, W4L, W4S, W2T, W4T; W1F, W9, W10, W11, W13, W14, W15, W2T and W4T run only when named); W5 and W6 use W4's results when W4 ran
  --profile   instead of the suite: svc alone under W1, W2, W4 with node --cpu-prof; summary in bench/results/profiles/<date>/
  --w6-rate N W6 at N creates/s instead of the derived rate (to map latency against load)
  --w11-records N  W11's collection size (default 100000)
  --w13-history N  W13: delivered jobs in the large history (default 1000000; against 10000)
  --w13-seconds S  W13: measured load per retention side and round (default 15); --w13-rate N writes/s and reads/s (100)
  --w13-parts L    W13: claim, retention or both (default claim,retention); W13's retention rounds default to 2
  --w4 LIST   W4 cells to run, e.g. sqlite:10,pg:1 (default: sqlite and pg, 1 and 10 targets)
  --feed-events N     W9: events to catch up on (default 100000)
  --stream-clients L  W10: client counts, e.g. 1,50,200 (default); --stream-rate N writes/s (200), --stream-seconds S (10)
  --logs      keep svc's stdout (info JSON logs) in the temporary directory, and keep that directory
  --readme    update bench/README.md (default: on for full runs, off for --quick and --only)`);
  process.exit(0);
}

const quick = args.quick;
const opts = {
  rounds: Number(args.rounds ?? (quick ? 1 : 3)),
  duration: Number(args.duration ?? (quick ? 3 : 10)),
  warmup: quick ? 1 : 3,
  connections: 64,
  records: 10_000,
  jobs: Number(args.jobs ?? (quick ? 2_000 : 20_000)),
  w4Configs: args.w4
    ? args.w4.split(',').map((c) => ({ kind: c.split(':')[0], targets: Number(c.split(':')[1] ?? 1) }))
    : (quick ? ['sqlite'] : ['sqlite', 'pg']).flatMap((kind) => (quick ? [1] : [1, 10]).map((targets) => ({ kind, targets }))),
  w7Jobs: 2400,
  w11Records: Number(args['w11-records'] ?? 100_000),
  w13History: Number(args['w13-history'] ?? 1_000_000),
  w13Seconds: Number(args['w13-seconds'] ?? 15),
  w13Rate: Number(args['w13-rate'] ?? 100),
  w13Claims: 400,
  w13Parts: (args['w13-parts'] ?? 'claim,retention').split(','),
  w13Rounds: Number(args.rounds ?? 2),
  w13PruneEveryMs: 3_000,
  w6Rate: args['w6-rate'] ? Number(args['w6-rate']) : null,
  coldStarts: 5,
  feedEvents: Number(args['feed-events'] ?? 100_000),
  streamClients: (args['stream-clients'] ?? '1,50,200').split(',').map(Number),
  streamRate: Number(args['stream-rate'] ?? 200),
  streamSeconds: Number(args['stream-seconds'] ?? 10),
  gwConcurrency: 16,
  profileJobs: 20_000,
  // Every drain is bounded; a round that hits the limit reports deliveries so far over the time taken.
  drainTimeoutMs: quick ? 20_000 : 25_000,
};
const all = quick ? ['W1', 'W2', 'W4'] : ['W1', 'W8', 'W2', 'W3', 'W4', 'W4O', 'W4L', 'W4S', 'W5', 'W6', 'W7', 'W12'];
const selected = args.only ? args.only.toUpperCase().split(',').map((s) => s.trim()) : all;
const writeReadme = args.readme ?? (!quick && !args.only);

if (!existsSync(SVC_MAIN)) {
  console.error(`bench: ${SVC_MAIN} is missing; run npm run build first`);
  process.exit(1);
}

const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-').replace(/-\d\d\dZ$/, 'Z');
const tmp = mkdtempSync(join(os.tmpdir(), 'svc-bench-'));
const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0).padStart(4)}s`;
const cellsApi = makeCells();
const pgInfo = selected.some((w) => ['W3', 'W4', 'W4L', 'W4S', 'W5', 'W7', 'W9', 'W11', 'W13', 'W14', 'W15', 'W4T'].includes(w)) ? await pgAvailable() : null;
const versions = readVersions();
const ctx = {
  opts,
  tls: null,
  shared: {},
  versions,
  pgPrefix: `svc_bench_${process.pid}`,
  cpuProfDir: process.env.BENCH_CPU_PROF_DIR ?? null,
  progress: (w, msg) => console.log(`${elapsed()} [${w}] ${msg}`),
  dir: (name) => {
    const d = join(tmp, name);
    mkdirSync(d, { recursive: true });
    return d;
  },
  logFile: (name) => (args.logs ? join(ctx.dir('logs'), `${name}.log`) : null),
  ...cellsApi,
};

let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  killAll();
  await dropAll();
  if (!args.keep && !args.logs) rmSync(tmp, { recursive: true, force: true });
  else console.log(`temporary files kept in ${tmp}`);
}
process.on('SIGINT', () => cleanup().finally(() => process.exit(130)));
process.on('SIGTERM', () => cleanup().finally(() => process.exit(143)));

function readVersions() {
  const v = (p) => {
    try {
      return JSON.parse(readFileSync(join(ROOT, p), 'utf8')).version;
    } catch {
      return null;
    }
  };
  let git = null;
  try {
    git = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', ROOT, 'status', '--porcelain', '--', 'packages'], { encoding: 'utf8' }).trim();
    if (dirty) git += ` (+${dirty.split('\n').length} uncommitted files under packages/)`;
  } catch {}
  const server = (p) => v(`packages/server/node_modules/${p}/package.json`) ?? v(`node_modules/${p}/package.json`);
  return {
    svc: v('packages/server/package.json'),
    git,
    node: process.version,
    fastify: server('fastify'),
    kysely: server('kysely'),
    'better-sqlite3': server('better-sqlite3'),
    pg: server('pg'),
    'undici (svc, W4 baseline)': server('undici'),
    autocannon: v('node_modules/autocannon/package.json'),
    postgres: pgInfo?.v ?? null,
  };
}

const failures = [];
async function step(name, fn) {
  if (!selected.includes(name)) return;
  try {
    await fn();
  } catch (err) {
    failures.push({ workload: name, error: String(err?.stack ?? err) });
    ctx.progress(name, `FAILED: ${err?.message ?? err}`);
    ctx.skip(name, `failed: ${String(err?.message ?? err).slice(0, 200)}`);
  }
}
const needsPg = (name) => {
  if (pgInfo) return true;
  ctx.progress(name, 'SKIPPED: PostgreSQL is not reachable at BENCH_PG_URL / postgres://postgres@127.0.0.1:5432/postgres');
  ctx.skip(name, 'PostgreSQL not reachable');
  return false;
};

console.log(`svc bench ${quick ? '(quick) ' : ''}— ${os.cpus().length} × ${os.cpus()[0]?.model}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB, Node ${process.version}`);
console.log(`placement: ${placement()}`);
const loadAtStart = os.loadavg();
if (loadAtStart[0] > 0.5) console.log(`note: load average ${loadAtStart.map((x) => x.toFixed(2)).join(' ')} before the run: other processes share this machine; ratios (same-run, interleaved) hold up better than absolute figures`);
console.log(`workloads: ${selected.join(', ')}; ${opts.rounds} round(s) of ${opts.duration} s, ${opts.connections} connections; temp ${tmp}`);

let receiver = null;
if (args.profile) {
  try {
    ctx.tls = await makeTls(tmp);
    receiver = await startReceiver({ ports: 10, tls: ctx.tls });
    const outDir = join(BENCH, 'results', 'profiles', stamp);
    mkdirSync(outDir, { recursive: true });
    console.log(await profileRun(ctx, receiver, outDir));
    console.log(`profiles and summary.md in bench/results/profiles/${stamp}/`);
  } finally {
    await receiver?.close().catch(() => {});
    await cleanup();
  }
  process.exit(0);
}
try {
  ctx.tls = await makeTls(tmp);
  if (selected.some((w) => ['W4', 'W4O', 'W4L', 'W4S', 'W4T', 'W6', 'W7', 'W13'].includes(w))) receiver = await startReceiver({ ports: 10, tls: ctx.tls, logFile: ctx.logFile('receiver') });
  await step('W1', () => w1(ctx));
  await step('W1F', () => w1Floor(ctx));
  await step('W8', () => w8(ctx));
  await step('W2', () => createWorkload(ctx, 'sqlite'));
  await step('W3', async () => needsPg('W3') && (await createWorkload(ctx, 'pg')));
  await step('W4', async () => {
    if (!pgInfo) opts.w4Databases = opts.w4Databases.filter((d) => d !== 'pg');
    await w4(ctx, receiver);
  });
  await step('W4O', () => w4Ordered(ctx, receiver));
  await step('W4L', () => w4Limited(ctx, receiver, pgInfo ? ['sqlite', 'pg'] : ['sqlite']));
  await step('W4S', () => w4Scheme(ctx, receiver, pgInfo ? ['sqlite', 'pg'] : ['sqlite']));
  await step('W5', async () => needsPg('W5') && (await w5(ctx)));
  await step('W6', () => w6(ctx, receiver));
  await step('W7', async () => needsPg('W7') && (await w7(ctx, receiver)));
  await step('W9', () => w9(ctx, pgInfo ? ['sqlite', 'pg'] : ['sqlite']));
  await step('W10', () => w10(ctx));
  await step('W12', () => w12(ctx));
  await step('W11', () => w11(ctx, pgInfo ? ['sqlite', 'pg'] : ['sqlite']));
  await step('W13', () => w13(ctx, receiver, pgInfo ? ['sqlite', 'pg'] : ['sqlite']));
  await step('W14', () => w14(ctx, pgInfo ? ['sqlite', 'pg'] : ['sqlite']));
  await step('W15', () => w15(ctx, pgInfo ? ['sqlite', 'pg'] : ['sqlite']));
  if (selected.includes('W2T') || selected.includes('W4T')) buildWithoutTracing(ctx);
  await step('W2T', () => w2Tracing(ctx));
  await step('W4T', () => w4Tracing(ctx, receiver, pgInfo ? ['sqlite', 'pg'] : ['sqlite']));
} finally {
  await receiver?.close().catch(() => {});
}

const sqlitePragmas = (() => {
  if (!ctx.shared.w1) return null;
  try {
    const db = new Database(ctx.shared.w1.dbPath, { readonly: true });
    const jm = db.pragma('journal_mode', { simple: true });
    db.close();
    return { journal_mode: jm, synchronous: 'FULL (svc default, SVC_SQLITE_SYNCHRONOUS unset; baselines set FULL)', busy_timeout: 5000 };
  } catch {
    return null;
  }
})();

const tableText = table(ctx.cells);
const minutes = ((performance.now() - t0) / 60_000).toFixed(1);
console.log(`\n${tableText}\n`);
console.log(`${minutes} min; ${ctx.cells.filter((c) => c.pass === false).length} target(s) missed${failures.length ? `; ${failures.length} workload(s) failed` : ''}`);

const command = `npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`;
const machine = {
  platform: `${os.platform()} ${os.release()}`,
  cpus: os.cpus().map((c) => ({ model: c.model, speed: c.speed })),
  totalMemBytes: os.totalmem(),
  freeMemBytes: os.freemem(),
  loadavgAtStart: loadAtStart,
  loadavgAtEnd: os.loadavg(),
  node: process.version,
  tmpdir: os.tmpdir(),
};
const results = {
  command,
  startedAt: started.toISOString(),
  minutes: Number(minutes),
  machine,
  versions,
  placement: placement(),
  settings: {
    ...opts,
    sqlite: sqlitePragmas ?? { journal_mode: 'wal', synchronous: 'FULL (svc default)' },
    postgres: pgInfo ? { synchronous_commit: pgInfo.sc, fsync: pgInfo.fs, shared_buffers: pgInfo.sb } : null,
    svc: { SVC_WEBHOOK_CONCURRENCY: 64, SVC_WEBHOOK_TARGET_CONCURRENCY: 8, SVC_LOG_LEVEL: 'info (stdout to /dev/null)', pgPoolSize: 16 },
  },
  cells: ctx.cells,
  failures,
};
const resultsFile = `${stamp}${quick ? '-quick' : ''}.json`;
mkdirSync(join(BENCH, 'results'), { recursive: true });
writeFileSync(join(BENCH, 'results', resultsFile), JSON.stringify(results, null, 2) + '\n');
console.log(`results: bench/results/${resultsFile}`);
if (writeReadme) {
  const cpu = `${os.cpus().length} × ${os.cpus()[0]?.model?.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB, Node ${process.version}, ${minutes} min`;
  if (updateReadme(join(BENCH, 'README.md'), { command, date: started.toISOString().slice(0, 16).replace('T', ' ') + ' UTC', resultsFile, tableText, machine: cpu, placement: placement() }))
    console.log('bench/README.md updated');
}
await cleanup();
process.exit(failures.length ? 1 : 0);
