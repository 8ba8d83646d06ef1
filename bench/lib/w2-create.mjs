import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from './load.mjs';
import { createDb } from './pg.mjs';
import { CORES, freePort, spawnOn, stop, waitHttp, withCpu } from './proc.mjs';
import { SECRET_KEY, SVC_MAIN, admin, recordData, startSvc } from './svc.mjs';

const BASELINES = {
  sqlite: fileURLToPath(new URL('../baselines/create-sqlite.mjs', import.meta.url)),
  pg: fileURLToPath(new URL('../baselines/create-pg.mjs', import.meta.url)),
};

/** `svc migrate` on the baseline's database, so both sides write to exactly the same schema and indexes. */
async function migrate(databaseUrl) {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, [SVC_MAIN, 'migrate'], { env: { ...process.env, SVC_DATABASE_URL: databaseUrl, SVC_SECRET_KEY: SECRET_KEY }, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`svc migrate failed: ${r.stderr}`);
}

/**
 * W2 (SQLite) / W3 (PostgreSQL): create a record with one subscribed target: record + event + job in one
 * transaction. svc runs `serve --no-worker`, so the write path is measured alone against a baseline that only writes.
 */
export async function createWorkload(ctx, kind) {
  const { opts } = ctx;
  const W = kind === 'sqlite' ? 'W2' : 'W3';
  const dir = ctx.dir(W.toLowerCase());
  const svcUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'svc.db')}` : await createDb(`${ctx.pgPrefix}_${W.toLowerCase()}`);
  const baseDbUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'baseline.db')}` : await createDb(`${ctx.pgPrefix}_${W.toLowerCase()}_base`);
  const svc = await startSvc({ mode: 'api', databaseUrl: svcUrl, tls: ctx.tls, logFile: ctx.logFile(`${W}-svc`) });
  let base = null;
  try {
    const a = await admin(svc.url);
    await a.collection('bench');
    const token = await a.token();
    await a.webhook('https://127.0.0.1:9/hook');
    await migrate(baseDbUrl);
    const port = await freePort();
    const env = { BENCH_PORT: String(port), BENCH_TOKEN: token, BENCH_TARGET_URL: 'https://127.0.0.1:9/hook' };
    if (kind === 'sqlite') Object.assign(env, { BENCH_DB: baseDbUrl.slice('sqlite:'.length), BENCH_SYNCHRONOUS: 'FULL' });
    else Object.assign(env, { BENCH_DB_URL: baseDbUrl, BENCH_POOL: '16' });
    base = spawnOn(CORES.server, [process.execPath, BASELINES[kind]], { env, logFile: ctx.logFile(`${W}-baseline`) });
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitHttp(`${baseUrl}/readyz`, { child: base });

    const body = JSON.stringify({ data: recordData(1) });
    const target = (url, duration) => ({
      url: `${url}/api/v1/collections/bench/records`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
      connections: opts.connections,
      duration,
    });
    ctx.progress(W, `warm-up ${opts.warmup} s per server`);
    for (const url of [baseUrl, svc.url]) await load(target(url, opts.warmup));
    const rounds = { baseline: [], svc: [] };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const side of ['baseline', 'svc']) {
        const { result: res, cpu } = await withCpu(side === 'svc' ? svc.pid : base.pid, () => load(target(side === 'svc' ? svc.url : baseUrl, opts.duration)));
        res.serverCpu = cpu;
        rounds[side].push(res);
        ctx.progress(W, `create (${kind}) round ${r}/${opts.rounds} ${side.padEnd(8)} ${Math.round(res.rps)} req/s  p99 ${res.latency.p99} ms  (server CPU ${Math.round(cpu * 100)}%, load generator ${Math.round(res.loadCpu * 100)}%)${res.warning ? '  ! ' + res.warning : ''}`);
      }
    }
    const label = kind === 'sqlite' ? 'SQLite synchronous=FULL' : 'PostgreSQL synchronous_commit=on';
    ctx.ratioCell({ workload: W, measure: `create record, 1 target, ${label}, req/s`, unit: 'req/s', baseline: rounds.baseline.map((x) => x.rps), svc: rounds.svc.map((x) => x.rps), min: 0.5, raw: rounds });
    ctx.shared[W] = { medianRps: rounds.svc.map((x) => x.rps) };
  } finally {
    await stop(base);
    await svc.stop();
  }
}
