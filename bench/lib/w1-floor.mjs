import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from './load.mjs';
import { CORES, freePort, spawnOn, stop, waitHttp, withCpu } from './proc.mjs';
import { admin, seedRecords, startSvc } from './svc.mjs';

const baseline = (file) => fileURLToPath(new URL(`../baselines/${file}`, import.meta.url));
const pct = (x) => `${Math.round(x * 100)}%`;

/**
 * W1F: what svc's HTTP stack costs a request, apart from what svc does. Three servers on W1's database, loaded in turn
 * with W1's lists: the raw baseline (node:http), the same work inside one bare Fastify route (`list-fastify.mjs`: no
 * hooks, logger or schema), and `svc serve`. Fastify ÷ raw is the stack's own share; svc ÷ Fastify is svc's (logging,
 * auth, headers, metrics, its page). Run only when named: it explains W1, it is not a bar of its own.
 */
export async function w1Floor(ctx) {
  const { opts } = ctx;
  let dbPath = ctx.shared.w1?.dbPath;
  let token = ctx.shared.w1?.token;
  if (!dbPath) {
    dbPath = join(ctx.dir('w1f'), 'svc.db');
    const seeder = await startSvc({ mode: 'api', databaseUrl: `sqlite:${dbPath}`, tls: ctx.tls, logFile: ctx.logFile('w1f-seed'), env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
    try {
      const a = await admin(seeder.url);
      await a.collection('bench');
      token = await a.token();
      ctx.progress('W1F', `seeding ${opts.records} records of ~1 KB through the API`);
      await seedRecords(seeder.url, token, 'bench', opts.records);
    } finally {
      await seeder.stop();
    }
  }
  const servers = [];
  try {
    for (const [name, file] of [['raw', 'list-sqlite.mjs'], ['fastify', 'list-fastify.mjs']]) {
      const port = await freePort();
      const child = spawnOn(CORES.server, [process.execPath, baseline(file)], { env: { BENCH_DB: dbPath, BENCH_PORT: String(port) }, logFile: ctx.logFile(`w1f-${name}`) });
      servers.push({ name, url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => stop(child) });
      await waitHttp(`http://127.0.0.1:${port}/readyz`, { child });
    }
    const svc = await startSvc({ mode: 'serve', databaseUrl: `sqlite:${dbPath}`, tls: ctx.tls, logFile: ctx.logFile('w1f-svc') });
    servers.push({ name: 'svc', url: svc.url, pid: svc.pid, stop: () => svc.stop() });

    const target = (url, limit, duration) => ({ url: `${url}/api/v1/collections/bench/records?limit=${limit}`, headers: { authorization: `Bearer ${token}` }, connections: opts.connections, duration });
    const limits = [5, 50];
    ctx.progress('W1F', `warm-up ${opts.warmup} s per server and limit`);
    for (const limit of limits) for (const s of servers) await load(target(s.url, limit, opts.warmup));
    const rounds = Object.fromEntries(limits.map((l) => [l, Object.fromEntries(servers.map((s) => [s.name, []]))]));
    for (let r = 1; r <= opts.rounds; r++) {
      for (const limit of limits) {
        for (const s of servers) {
          const { result: res, cpu } = await withCpu(s.pid, () => load(target(s.url, limit, opts.duration)));
          res.serverCpu = cpu;
          res.cpuUsPerRequest = (cpu * opts.duration * 1e6) / (res.rps * opts.duration);
          rounds[limit][s.name].push(res);
          ctx.progress('W1F', `limit=${limit} round ${r}/${opts.rounds} ${s.name.padEnd(8)} ${Math.round(res.rps)} req/s  p99 ${res.latency.p99} ms  (server CPU ${pct(cpu)}, ${Math.round(res.cpuUsPerRequest)} µs a request)${res.warning ? '  ! ' + res.warning : ''}`);
        }
      }
    }
    for (const limit of limits) {
      const rps = (name) => rounds[limit][name].map((x) => x.rps);
      ctx.ratioCell({ workload: 'W1F', measure: `list limit=${limit}: bare Fastify route ÷ raw node:http, req/s`, unit: 'req/s', baseline: rps('raw'), svc: rps('fastify'), raw: rounds[limit] });
      ctx.ratioCell({ workload: 'W1F', measure: `list limit=${limit}: svc ÷ bare Fastify route, req/s`, unit: 'req/s', baseline: rps('fastify'), svc: rps('svc') });
    }
  } finally {
    for (const s of servers) await s.stop();
  }
}
