// W15 baseline: the same broker client svc uses, publishing the same envelope bodies with the same headers, signed
// the same way (HMAC-SHA256 over "<timestamp>.<body>" per message), each waiting for the same acknowledgement svc
// waits for: a JetStream PubAck (Nats-Msg-Id = the id), a RabbitMQ publisher confirm of a mandatory persistent
// message (message_id = the id), a Redis XADD reply (fields: headers, id, body). BENCH_IN_FLIGHT at once (svc's
// SVC_WEBHOOK_TARGET_CONCURRENCY for its one target). Jobs come from the file dumped from the seeded svc database;
// reading it is part of the timed run. Prints {"failed":N} when every job has its answer.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const { BENCH_JOBS, BENCH_KIND, BENCH_URL, BENCH_ADDRESS, BENCH_IN_FLIGHT = '8' } = process.env;
const secret = 'whsec_' + 'b'.repeat(43);

const jobs = [];
for (const line of readFileSync(BENCH_JOBS, 'utf8').split('\n')) {
  if (!line) continue;
  const [, id, body] = JSON.parse(line);
  jobs.push({ id, body: Buffer.from(body) });
}

function headersOf(job) {
  const ts = Math.floor(Date.now() / 1000);
  const sig = createHmac('sha256', secret).update(`${ts}.`).update(job.body).digest('hex');
  return { 'content-type': 'application/json', 'svc-delivery': job.id, 'svc-timestamp': String(ts), 'svc-signature': `v1=${sig}` };
}

/** One publish of `job`, resolved once the broker acknowledged it (true) or refused it (false). */
async function publisher() {
  if (BENCH_KIND === 'nats') {
    const { connect, headers } = require('@nats-io/transport-node');
    const { jetstream } = require('@nats-io/jetstream');
    const u = new URL(BENCH_URL);
    // As svc connects (senders/nats.ts): no async stack traces, which cost two Errors per publish.
    const nc = await connect({ servers: u.host, noAsyncTraces: true });
    const js = jetstream(nc, { timeout: 15_000 });
    return {
      async publish(job) {
        const h = headers();
        for (const [k, v] of Object.entries(headersOf(job))) h.set(k, v);
        await js.publish(BENCH_ADDRESS, job.body, { msgID: job.id, headers: h, timeout: 15_000 });
        return true;
      },
      close: () => nc.close(),
    };
  }
  if (BENCH_KIND === 'rabbitmq') {
    const amqp = require('amqplib');
    const conn = await amqp.connect(BENCH_URL);
    const ch = await conn.createConfirmChannel();
    const returned = new Set();
    ch.on('return', (m) => returned.add(m.properties.messageId));
    return {
      publish: (job) =>
        new Promise((resolve) => {
          const options = { mandatory: true, persistent: true, messageId: job.id, contentType: 'application/json', headers: headersOf(job) };
          ch.publish(BENCH_ADDRESS, '', job.body, options, (err) => resolve(!err && !returned.delete(job.id)));
        }),
      close: () => conn.close(),
    };
  }
  const { createClient } = require('redis');
  const client = createClient({ url: BENCH_URL, disableOfflineQueue: true });
  await client.connect();
  return {
    async publish(job) {
      await client.xAdd(BENCH_ADDRESS, '*', { ...headersOf(job), id: job.id, body: job.body });
      return true;
    },
    close: () => client.destroy(),
  };
}

const p = await publisher();
let next = 0;
let failed = 0;
async function lane() {
  while (next < jobs.length) {
    const job = jobs[next++];
    try {
      if (!(await p.publish(job))) failed++;
    } catch {
      failed++;
    }
  }
}
await Promise.all(Array.from({ length: Number(BENCH_IN_FLIGHT) }, lane));
await p.close();
process.stdout.write(JSON.stringify({ failed }) + '\n');
