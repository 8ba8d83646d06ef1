// W13's pruner: svc's own retention pass (dist/retention.js, the code `svc prune` and the background timer run), every
// `everyMs`, in its own process on the server core. serve's timer runs a pass only once a minute and has no setting to
// shorten it; this runs the same pass often enough that a 30 s load sees several. Reports each pass over IPC.
import { fileURLToPath } from 'node:url';

const dist = (p) => new URL(`../../packages/server/dist/${p}`, import.meta.url).href;
const { loadConfig } = await import(dist('config/load.js'));
const { openContext } = await import(dist('runtime.js'));
const { prunePass } = await import(dist('retention.js'));
const { default: pino } = await import(fileURLToPath(new URL('../../node_modules/pino/pino.js', import.meta.url)));

const cfg = JSON.parse(process.argv[2]);
const ctx = await openContext(loadConfig(process.env), { logger: pino({ level: 'warn' }, pino.destination(2)) });
let stopped = false;
// Paused until the harness measures this side: only the measured side's pruner runs.
let paused = true;
process.on('message', (m) => {
  if (m.cmd === 'stop') stopped = true;
  if (m.cmd === 'pause' || m.cmd === 'resume') paused = m.cmd === 'pause';
});
process.send({ ready: true });
const sleep = () => new Promise((r) => setTimeout(r, 100));
for (let i = 0; i < 100_000 && !stopped; i++) {
  for (let w = 0; w < 100_000 && paused && !stopped; w++) await sleep();
  if (stopped) break;
  const t0 = performance.now();
  let wait = cfg.everyMs;
  try {
    const removed = await prunePass(ctx);
    process.send({ pass: { at: Date.now(), ms: performance.now() - t0, removed } });
  } catch (err) {
    // On SQLite a pass in a second process can meet SQLITE_BUSY_SNAPSHOT (a batch reads, then deletes, in a deferred
    // transaction; a write committed by svc in between makes the upgrade fail at once, busy_timeout or not).
    process.send({ pass: { at: Date.now(), ms: performance.now() - t0, failed: String(err?.code ?? err?.message ?? err) } });
    wait = 200;
  }
  const until = performance.now() + wait;
  while (!stopped && !paused && performance.now() < until) await sleep();
}
await ctx.database.close();
process.send({ done: true });
process.disconnect();
