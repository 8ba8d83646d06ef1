import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { load } from './load.mjs';
import { median, percentile } from './stats.mjs';
import { admin, recordData, startSvc } from './svc.mjs';

/**
 * W6: commit → receipt latency with `svc serve` (API + worker in one process, SQLite) under an open-loop create
 * rate of half W4's SQLite 1-target drain rate. Latency = receiver's arrival time − the record's createdAt (taken
 * inside the transaction, before COMMIT), so it includes the commit itself: an upper bound.
 */
export async function w6(ctx, receiver) {
  const { opts } = ctx;
  const w4Rate = ctx.shared.w4_sqlite_1t?.svcRate;
  const w2Rate = ctx.shared.W2?.medianRps ? Math.min(...ctx.shared.W2.medianRps) : Infinity;
  let rate = Math.round((w4Rate ?? 1000) / 2);
  let note = w4Rate ? `half of W4 SQLite 1-target (${Math.round(w4Rate)}/s)` : 'W4 not run: 500/s';
  if (rate > w2Rate * 0.8) {
    note += `, capped at 80% of W2's slowest svc round (${Math.round(w2Rate)}/s)`;
    rate = Math.round(w2Rate * 0.8);
  }
  const dir = ctx.dir('w6');
  const svc = await startSvc({ mode: 'serve', databaseUrl: `sqlite:${join(dir, 'svc.db')}`, tls: ctx.tls, logFile: ctx.logFile('w6-svc') });
  const p50s = [];
  const p99s = [];
  const raw = [];
  try {
    const a = await admin(svc.url);
    await a.collection('bench');
    const token = await a.token();
    await a.webhook(receiver.urls[0]);
    const target = (duration) => ({
      url: `${svc.url}/api/v1/collections/bench/records`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: recordData(1) }),
      connections: 16,
      overallRate: rate,
      duration,
    });
    ctx.progress('W6', `open-loop creates at ${rate}/s (${note}); warm-up ${opts.warmup} s`);
    receiver.expect(Infinity, { latency: true, timeoutMs: 1000 }).catch(() => {});
    await load(target(opts.warmup));
    for (let r = 1; r <= opts.rounds; r++) {
      // Let the previous load's deliveries land first (no new receipt for 1.5 s, at most 20 s).
      for (let i = 0, last = -1, still = 0; i < 200 && still < 15; i++) {
        const { count } = await receiver.stats();
        still = count === last ? still + 1 : 0;
        last = count;
        await sleep(100);
      }
      receiver.expect(Infinity, { latency: true, timeoutMs: 1000 }).catch(() => {});
      const res = await load(target(opts.duration));
      let stats = await receiver.stats();
      for (let i = 0; i < 300 && stats.count < res.ok; i++) {
        await sleep(100);
        stats = await receiver.stats();
      }
      stats = await receiver.stats(true);
      const lat = stats.latencies.sort((x, y) => x - y);
      const p50 = percentile(lat, 50);
      const p99 = percentile(lat, 99);
      p50s.push(p50);
      p99s.push(p99);
      raw.push({ achievedRate: res.rps, created: res.ok, received: stats.count, p50, p90: percentile(lat, 90), p99, max: lat.at(-1), createP99: res.latency.p99 });
      ctx.progress('W6', `round ${r}/${opts.rounds}: ${Math.round(res.rps)} creates/s, ${stats.count}/${res.ok} received, commit→receipt p50 ${p50.toFixed(1)} ms p99 ${p99.toFixed(1)} ms`);
    }
  } finally {
    await svc.stop();
  }
  ctx.valueCell({ workload: 'W6', measure: `commit → receipt p50 at ${rate} creates/s`, unit: 'ms', rounds: p50s, value: median(p50s), max: 5, target: '≤ 5 ms', raw, note });
  ctx.valueCell({ workload: 'W6', measure: `commit → receipt p99 at ${rate} creates/s`, unit: 'ms', rounds: p99s, value: median(p99s), max: 25, target: '≤ 25 ms' });
}
