// W5 reference: graphile-worker 0.16 (bench-only dependency in bench/node_modules) draining BENCH_JOBS no-op
// jobs on the same PostgreSQL. Jobs are added in bulk before timing; the clock runs from run() to the last
// job:success. One JSON answer on stdout.
import { makeWorkerUtils, run } from 'graphile-worker';

const { BENCH_DB_URL, BENCH_JOBS = '20000', BENCH_CONCURRENCY = '16', BENCH_POOL = '20' } = process.env;
const N = Number(BENCH_JOBS);
const utils = await makeWorkerUtils({ connectionString: BENCH_DB_URL });
await utils.migrate();
await utils.withPgClient((c) =>
  c.query(
    `select graphile_worker.add_jobs(array(select row('noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec from generate_series(1, $1::int)))`,
    [N],
  ),
);
await utils.release();

let done = 0;
let resolveDone;
const finished = new Promise((r) => (resolveDone = r));
const t0 = process.hrtime.bigint();
let first = null;
const runner = await run({
  connectionString: BENCH_DB_URL,
  concurrency: Number(BENCH_CONCURRENCY),
  maxPoolSize: Number(BENCH_POOL),
  noHandleSignals: true,
  pollInterval: 1000,
  logger: undefined,
  taskList: { noop: async () => {} },
});
runner.events.on('job:success', () => {
  first ??= process.hrtime.bigint();
  if (++done === N) resolveDone(process.hrtime.bigint());
});
const timeout = setTimeout(() => resolveDone(null), 300_000);
const t1 = await finished;
clearTimeout(timeout);
await runner.stop();
if (t1 === null) {
  process.stdout.write(JSON.stringify({ error: `only ${done} of ${N} jobs done in 300 s` }) + '\n');
  process.exit(1);
}
const seconds = Number(t1 - t0) / 1e9;
process.stdout.write(JSON.stringify({ jobs: N, seconds, rate: N / seconds, firstMs: Number(first - t0) / 1e6 }) + '\n');
process.exit(0);
