import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from './load.mjs';
import { CORES, freePort, rssSampler, spawnOn, stop, waitHttp, withCpu } from './proc.mjs';
import { median } from './stats.mjs';
import { admin, seedRecords, startSvc } from './svc.mjs';

const pct = (x) => `${Math.round(x * 100)}%`;
const BASELINE = fileURLToPath(new URL('../baselines/list-sqlite.mjs', import.meta.url));

/** W1: list records (10k rows of ~1 KB) with a bearer token, 64 connections; limit=50 and limit=5. Also W8's RSS. */
export async function w1(ctx) {
  const { opts } = ctx;
  const dir = ctx.dir('w1');
  const dbPath = join(dir, 'svc.db');
  // Seeding is not measured: it runs with synchronous=NORMAL; the measured svc below runs the shipped FULL.
  const seeder = await startSvc({ mode: 'api', databaseUrl: `sqlite:${dbPath}`, tls: ctx.tls, logFile: ctx.logFile('w1-seed'), env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
  let token;
  try {
    const a = await admin(seeder.url);
    await a.collection('bench');
    token = await a.token();
    ctx.progress('W1', `seeding ${opts.records} records of ~1 KB through the API`);
    const seeded = await seedRecords(seeder.url, token, 'bench', opts.records);
    ctx.progress('W1', `seeded in ${seeded.seconds.toFixed(1)} s (${Math.round(seeded.count / seeded.seconds)} creates/s)`);
  } finally {
    await seeder.stop();
  }
  const svc = await startSvc({ mode: 'serve', databaseUrl: `sqlite:${dbPath}`, tls: ctx.tls, logFile: ctx.logFile('w1-svc') });
  const base = { child: null };
  try {
    const port = await freePort();
    base.child = spawnOn(CORES.server, [process.execPath, BASELINE], { env: { BENCH_DB: dbPath, BENCH_PORT: String(port) }, logFile: ctx.logFile('w1-baseline') });
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitHttp(`${baseUrl}/readyz`, { child: base.child });

    const headers = { authorization: `Bearer ${token}` };
    const target = (url, limit, duration) => ({ url: `${url}/api/v1/collections/bench/records?limit=${limit}`, headers, connections: opts.connections, duration });
    const limits = [50, 5];
    ctx.progress('W1', `warm-up ${opts.warmup} s per server and limit`);
    for (const limit of limits) for (const url of [baseUrl, svc.url]) await load(target(url, limit, opts.warmup));

    const rounds = Object.fromEntries(limits.map((l) => [l, { baseline: [], svc: [] }]));
    const rss = [];
    for (let r = 1; r <= opts.rounds; r++) {
      for (const limit of limits) {
        for (const side of ['baseline', 'svc']) {
          const sampler = side === 'svc' ? rssSampler(svc.pid) : null;
          const { result: res, cpu } = await withCpu(side === 'svc' ? svc.pid : base.child.pid, () => load(target(side === 'svc' ? svc.url : baseUrl, limit, opts.duration)));
          res.serverCpu = cpu;
          if (sampler) rss.push(sampler.stop().peakMb);
          rounds[limit][side].push(res);
          ctx.progress('W1', `limit=${limit} round ${r}/${opts.rounds} ${side.padEnd(8)} ${Math.round(res.rps)} req/s  p99 ${res.latency.p99} ms  (server CPU ${pct(cpu)}, load generator ${pct(res.loadCpu)})${res.warning ? '  ! ' + res.warning : ''}`);
        }
      }
    }
    for (const limit of limits) {
      const { baseline, svc: s } = rounds[limit];
      ctx.ratioCell({ workload: 'W1', measure: `list limit=${limit}, req/s`, unit: 'req/s', baseline: baseline.map((x) => x.rps), svc: s.map((x) => x.rps), min: 0.6, raw: rounds[limit] });
      ctx.ratioCell({ workload: 'W1', measure: `list limit=${limit}, p99 latency`, unit: 'ms', baseline: baseline.map((x) => x.latency.p99), svc: s.map((x) => x.latency.p99), max: 1.5, lowerIsBetter: true });
    }
    ctx.valueCell({ workload: 'W8', measure: 'RSS under W1 load (peak)', unit: 'MB', rounds: rss, value: Math.max(...rss), max: 200, target: '≤ 200 MB' });
    ctx.shared.w1 = { dbPath, token, medianRps: median(rounds[50].svc.map((x) => x.rps)) };
  } finally {
    await stop(base.child);
    await svc.stop();
  }
}
