import { join } from 'node:path';
import { median } from './stats.mjs';
import { startSvc } from './svc.mjs';

/** W8: cold start of `svc serve` (built files) to the first 200 from /readyz, on W1's database and on a new one. */
export async function w8(ctx) {
  const { opts } = ctx;
  const cases = [];
  if (ctx.shared.w1) cases.push({ label: `existing SQLite database (${opts.records} records)`, url: () => `sqlite:${ctx.shared.w1.dbPath}` });
  let n = 0;
  const dir = ctx.dir('w8');
  cases.push({ label: 'new SQLite database (migrations run)', url: () => `sqlite:${join(dir, `fresh-${++n}.db`)}` });
  for (const c of cases) {
    const times = [];
    for (let i = 1; i <= opts.coldStarts; i++) {
      const t0 = performance.now();
      const svc = await startSvc({ mode: 'serve', databaseUrl: c.url(), tls: ctx.tls, logFile: ctx.logFile('w8-svc') });
      times.push(performance.now() - t0);
      await svc.stop();
    }
    ctx.progress('W8', `cold start to /readyz, ${c.label}: ${times.map((t) => Math.round(t)).join(', ')} ms`);
    ctx.valueCell({ workload: 'W8', measure: `cold start to /readyz, ${c.label}`, unit: 'ms', rounds: times, value: median(times), max: 1000, target: '≤ 1000 ms' });
  }
}
