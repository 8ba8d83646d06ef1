import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from './load.mjs';
import { CORES, freePort, spawnOn, stop, waitHttp, withCpu } from './proc.mjs';
import { SECRET_KEY, SVC_MAIN, admin, recordData, startSvc } from './svc.mjs';

const BASELINE = fileURLToPath(new URL('../baselines/create-sqlite.mjs', import.meta.url));
const OPS_PER_BATCH = 50;

async function migrate(databaseUrl) {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, [SVC_MAIN, 'migrate'], { env: { ...process.env, SVC_DATABASE_URL: databaseUrl, SVC_SECRET_KEY: SECRET_KEY }, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`svc migrate failed: ${r.stderr}`);
}

/**
 * W12: `POST /api/v1/batch` of 50 creates with one subscribed target (50 records, 50 events, 50 jobs in one
 * transaction) on SQLite, against the W2 baseline running the same 50 inserts + events + jobs in one raw
 * transaction per request. svc runs `serve --no-worker`: the write path alone. Measured in records per second.
 */
export async function w12(ctx) {
  const { opts } = ctx;
  const dir = ctx.dir('w12');
  const svc = await startSvc({ mode: 'api', databaseUrl: `sqlite:${join(dir, 'svc.db')}`, tls: ctx.tls, logFile: ctx.logFile('W12-svc') });
  let base = null;
  try {
    const a = await admin(svc.url);
    await a.collection('bench');
    const token = await a.token();
    await a.webhook('https://127.0.0.1:9/hook');
    const baseDb = join(dir, 'baseline.db');
    await migrate(`sqlite:${baseDb}`);
    const port = await freePort();
    const env = { BENCH_PORT: String(port), BENCH_TOKEN: token, BENCH_TARGET_URL: 'https://127.0.0.1:9/hook', BENCH_DB: baseDb, BENCH_SYNCHRONOUS: 'FULL' };
    base = spawnOn(CORES.server, [process.execPath, BASELINE], { env, logFile: ctx.logFile('W12-baseline') });
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitHttp(`${baseUrl}/readyz`, { child: base });

    const body = JSON.stringify({ operations: Array.from({ length: OPS_PER_BATCH }, (_, i) => ({ method: 'POST', collection: 'bench', data: recordData(i) })) });
    // Fewer connections than W2: each request is 50 writes, and the point is the transaction, not the queueing.
    const target = (url, duration) => ({
      url: `${url}/api/v1/batch`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
      connections: 16,
      duration,
    });
    ctx.progress('W12', `warm-up ${opts.warmup} s per server`);
    for (const url of [baseUrl, svc.url]) await load(target(url, opts.warmup));
    const rounds = { baseline: [], svc: [] };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const side of ['baseline', 'svc']) {
        const { result: res, cpu } = await withCpu(side === 'svc' ? svc.pid : base.pid, () => load(target(side === 'svc' ? svc.url : baseUrl, opts.duration)));
        res.serverCpu = cpu;
        res.recordsPerSecond = res.rps * OPS_PER_BATCH;
        rounds[side].push(res);
        ctx.progress('W12', `batch of ${OPS_PER_BATCH} round ${r}/${opts.rounds} ${side.padEnd(8)} ${Math.round(res.recordsPerSecond)} records/s  p99 ${res.latency.p99} ms  (server CPU ${Math.round(cpu * 100)}%)${res.warning ? '  ! ' + res.warning : ''}`);
      }
    }
    ctx.ratioCell({
      workload: 'W12',
      measure: `batch of ${OPS_PER_BATCH} creates, 1 target, SQLite synchronous=FULL, records/s`,
      unit: '/s',
      baseline: rounds.baseline.map((x) => x.recordsPerSecond),
      svc: rounds.svc.map((x) => x.recordsPerSecond),
      min: 0.6,
      raw: rounds,
    });
  } finally {
    await stop(base);
    await svc.stop();
  }
}
