// Open-loop load at a steady rate, run in its own process on the load core: request i is sent at
// t0 + i / rate whether or not earlier ones were answered (autocannon's overallRate sends each second's budget
// as a burst, which measures queueing behind the burst, not the latency of a steady stream). Latency is taken from
// the scheduled send time, so a stalled server is not hidden by the generator waiting for it. One JSON answer on stdout.
import { createRequire } from 'node:module';
import { percentile } from './stats.mjs';

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const { Pool } = require('undici');

const cfg = JSON.parse(process.argv[2]);
const url = new URL(cfg.url);
const pool = new Pool(url.origin, { connections: cfg.connections ?? 16, pipelining: 1 });
const total = Math.round(cfg.rate * cfg.duration);
const latencies = [];
let ok = 0;
let non2xx = 0;
let errors = 0;
let sent = 0;
const inflight = new Set();

function fire(scheduledAt) {
  const p = pool
    .request({ path: url.pathname + url.search, method: cfg.method ?? 'GET', headers: cfg.headers ?? {}, body: cfg.body })
    .then(async (res) => {
      await res.body.dump();
      latencies.push(performance.now() - scheduledAt);
      if (res.statusCode >= 200 && res.statusCode < 300) ok++;
      else non2xx++;
    })
    .catch(() => errors++)
    .finally(() => inflight.delete(p));
  inflight.add(p);
}

const cpu0 = process.cpuUsage();
const t0 = performance.now() + 5;
const interval = 1000 / cfg.rate;
await new Promise((resolve) => {
  const tick = () => {
    const now = performance.now();
    while (sent < total && t0 + sent * interval <= now) fire(t0 + sent++ * interval);
    if (sent >= total) return resolve();
    // Sleep until the next send is due; timers are ~1 ms coarse, so the last stretch spins on setImmediate.
    const wait = t0 + sent * interval - now;
    if (wait > 2) setTimeout(tick, wait - 1);
    else setImmediate(tick);
  };
  tick();
});
const sentAt = performance.now();
await Promise.all([...inflight]);
const elapsed = performance.now() - t0;
await pool.close();
const used = process.cpuUsage(cpu0);
latencies.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({
    durationS: (sentAt - t0) / 1000,
    total: sent,
    ok,
    non2xx,
    errors,
    timeouts: 0,
    rps: ok / ((sentAt - t0) / 1000),
    loadCpu: (used.user + used.system) / 1000 / elapsed,
    latency: { p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), max: latencies.at(-1) ?? 0, mean: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length) },
  }) + '\n',
);
