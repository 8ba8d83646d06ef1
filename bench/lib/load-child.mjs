// Load generator, run in its own process (pinned apart from the server): autocannon's programmatic API,
// one JSON answer on stdout.
import autocannon from 'autocannon';

const cfg = JSON.parse(process.argv[2]);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const result = await autocannon({
  url: cfg.url,
  method: cfg.method ?? 'GET',
  headers: cfg.headers ?? {},
  body: cfg.body,
  connections: cfg.connections,
  duration: cfg.duration,
  overallRate: cfg.overallRate,
  pipelining: 1,
  timeout: 10,
});
const ok = result['2xx'];
const used = process.cpuUsage(cpu0);
// The load generator's own CPU use (fraction of its core): near 1.0 means it, not the server, set the pace.
const loadCpu = (used.user + used.system) / 1000 / (performance.now() - t0);
process.stdout.write(
  JSON.stringify({
    durationS: result.duration,
    total: result.requests.total,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    rps: ok / result.duration,
    loadCpu,
    latency: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.mean },
    bytesPerReq: result.throughput.total / Math.max(1, result.requests.total),
  }) + '\n',
);
