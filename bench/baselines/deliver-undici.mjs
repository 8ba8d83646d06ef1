// W4 baseline: an undici keep-alive client (the same undici major svc ships with) posting the same envelope
// bodies, signed the same way (HMAC-SHA256 over "<timestamp>.<body>" per attempt), to the same receiver:
// at most BENCH_PER_TARGET connections and requests in flight per target, BENCH_GLOBAL in all (svc's defaults).
// Jobs come from a file dumped from the seeded svc database; reading it is part of the timed run.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const { Pool } = require('undici');

const { BENCH_JOBS, BENCH_URLS, BENCH_CA, BENCH_PER_TARGET = '8', BENCH_GLOBAL = '64' } = process.env;
const urls = JSON.parse(BENCH_URLS);
const ca = readFileSync(BENCH_CA, 'utf8');
const perTarget = Number(BENCH_PER_TARGET);
let globalFree = Number(BENCH_GLOBAL);
const secret = 'whsec_' + 'b'.repeat(43);

const queues = urls.map(() => []);
for (const line of readFileSync(BENCH_JOBS, 'utf8').split('\n')) {
  if (!line) continue;
  const [target, id, body] = JSON.parse(line);
  queues[target].push({ id, body });
}
const pools = urls.map((u) => new Pool(new URL(u).origin, { connections: perTarget, pipelining: 1, connect: { ca } }));
const paths = urls.map((u) => new URL(u).pathname);
const waitingForGlobal = [];
const acquire = () => (globalFree > 0 ? (globalFree--, Promise.resolve()) : new Promise((r) => waitingForGlobal.push(r)));
const release = () => (waitingForGlobal.length > 0 ? waitingForGlobal.shift()() : globalFree++);

let failed = 0;
async function lane(i) {
  const q = queues[i];
  for (let guard = 0; q.length > 0 && guard < 10_000_000; guard++) {
    const job = q.shift();
    await acquire();
    try {
      const ts = Math.floor(Date.now() / 1000);
      const sig = createHmac('sha256', secret).update(`${ts}.${job.body}`).digest('hex');
      const res = await pools[i].request({
        path: paths[i],
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'svc-webhooks/1', 'svc-delivery': job.id, 'svc-timestamp': String(ts), 'svc-signature': `v1=${sig}` },
        body: job.body,
        headersTimeout: 15_000,
      });
      await res.body.text();
      if (res.statusCode < 200 || res.statusCode >= 300) failed++;
    } catch {
      failed++;
    } finally {
      release();
    }
  }
}
const lanes = [];
for (let i = 0; i < urls.length; i++) for (let k = 0; k < perTarget; k++) lanes.push(lane(i));
await Promise.all(lanes);
await Promise.all(pools.map((p) => p.close()));
process.stdout.write(JSON.stringify({ failed }) + '\n');
