import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createDb, dropDb } from './pg.mjs';
import { CORES, runJson } from './proc.mjs';
import { median } from './stats.mjs';

const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../baselines/graphile-worker.mjs', import.meta.url));
const PKG = fileURLToPath(new URL('../node_modules/graphile-worker/package.json', import.meta.url));

/** graphile-worker lives in bench/node_modules, outside the workspace and its lockfile; installed on first use. */
export function ensureGraphileWorker(progress) {
  if (!existsSync(PKG)) {
    progress('W5', 'installing graphile-worker ~0.16.6 into bench/node_modules (npm install --prefix bench --no-package-lock)');
    const r = spawnSync('npm', ['install', '--prefix', BENCH_DIR, '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts'], { encoding: 'utf8', timeout: 180_000 });
    if (r.status !== 0 || !existsSync(PKG)) return { ok: false, reason: `npm install failed: ${(r.stderr || r.error?.message || '').slice(-400)}` };
  }
  return { ok: true, version: JSON.parse(readFileSync(PKG, 'utf8')).version };
}

/** W5: graphile-worker's jobs/s on the same PostgreSQL, against svc's W4 PostgreSQL deliveries/s. */
export async function w5(ctx) {
  const { opts } = ctx;
  const gw = ensureGraphileWorker(ctx.progress);
  if (!gw.ok) {
    ctx.progress('W5', `SKIPPED: graphile-worker is not available (${gw.reason})`);
    ctx.skip('W5', `graphile-worker not installable: ${gw.reason}`);
    return;
  }
  ctx.versions['graphile-worker'] = gw.version;
  const rates = [];
  const raw = [];
  for (let r = 1; r <= opts.rounds; r++) {
    const name = `${ctx.pgPrefix}_w5_r${r}`;
    const url = await createDb(name);
    try {
      const res = await runJson(CORES.server, [process.execPath, SCRIPT], { env: { BENCH_DB_URL: url, BENCH_JOBS: String(opts.jobs), BENCH_CONCURRENCY: String(opts.gwConcurrency) }, timeoutMs: 400_000 });
      rates.push(res.rate);
      raw.push(res);
      ctx.progress('W5', `graphile-worker round ${r}/${opts.rounds}: ${Math.round(res.rate)} jobs/s (${res.jobs} in ${res.seconds.toFixed(2)} s, concurrency ${opts.gwConcurrency})`);
    } finally {
      await dropDb(name).catch(() => {});
    }
  }
  const gwRate = median(rates);
  ctx.valueCell({ workload: 'W5', measure: `graphile-worker ${gw.version} no-op jobs/s (concurrency ${opts.gwConcurrency})`, unit: '/s', rounds: rates, value: gwRate, target: '—', raw });
  for (const { targets } of opts.w4Configs.filter((c) => c.kind === 'pg')) {
    const svcRate = ctx.shared[`w4_pg_${targets}t`]?.svcRate;
    if (svcRate === undefined) continue;
    ctx.valueCell({ workload: 'W5', measure: `svc deliveries/s (W4 PostgreSQL, ${targets} target${targets > 1 ? 's' : ''}) ÷ graphile-worker jobs/s`, unit: '×', rounds: [], value: svcRate / gwRate, min: 0.5, target: '≥ 0.5×' });
  }
}
