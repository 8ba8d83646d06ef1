import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { query } from './pg.mjs';
import { CORES, cpuSeconds, nowNs, spawnOn, stop } from './proc.mjs';
import { startSvc } from './svc.mjs';
import { cloneTemplate, seedTemplate } from './w4-deliver.mjs';

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const BASELINE = fileURLToPath(new URL('../baselines/publish-brokers.mjs', import.meta.url));
const ms = (a, b) => Number(BigInt(b) - BigInt(a)) / 1e6;

/** The brokers W15 publishes into (SPEC §14), on loopback as CI starts them; BENCH_*_URL to point elsewhere. */
export const W15_BROKERS = {
  nats: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
  rabbitmq: process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  redis: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
};

/**
 * Where one kind's messages go, created for the run and removed after it, and how many it holds now: the clock of
 * both sides stops at the first count of all the jobs, read every 20 ms (the count is the broker's own: stored,
 * confirmed, appended).
 */
async function sink(kind, name) {
  if (kind === 'nats') {
    const { connect } = require('@nats-io/transport-node');
    const { jetstreamManager } = require('@nats-io/jetstream');
    const nc = await connect({ servers: new URL(W15_BROKERS.nats).host });
    const jsm = await jetstreamManager(nc);
    const stream = name.toUpperCase().replace(/-/g, '_');
    const config = { name: stream, subjects: [`${name}.>`] };
    await jsm.streams.add(config);
    return {
      address: { svc: { subject: `${name}.{collection}` }, baseline: `${name}.bench` },
      count: async () => (await jsm.streams.info(stream)).state.messages,
      // Made anew, not purged: a purge keeps the duplicate window's ids, and both sides publish the same delivery
      // ids (Nats-Msg-Id), so the second side's messages would all be acknowledged as duplicates and never stored.
      empty: async () => {
        await jsm.streams.delete(stream);
        await jsm.streams.add(config);
      },
      remove: async () => {
        await jsm.streams.delete(stream).catch(() => {});
        await nc.close();
      },
    };
  }
  if (kind === 'rabbitmq') {
    const amqp = require('amqplib');
    const conn = await amqp.connect(W15_BROKERS.rabbitmq);
    const ch = await conn.createChannel();
    await ch.assertExchange(name, 'fanout', { durable: true });
    await ch.assertQueue(name, { durable: true });
    await ch.bindQueue(name, name, '');
    return {
      address: { svc: { exchange: name }, baseline: name },
      count: async () => (await ch.checkQueue(name)).messageCount,
      empty: () => ch.purgeQueue(name),
      remove: async () => {
        await ch.deleteQueue(name).catch(() => {});
        await ch.deleteExchange(name).catch(() => {});
        await conn.close();
      },
    };
  }
  const { createClient } = require('redis');
  const client = createClient({ url: W15_BROKERS.redis });
  await client.connect();
  const key = `${name}:bench`;
  return {
    address: { svc: { stream: `${name}:{collection}` }, baseline: key },
    count: () => client.xLen(key),
    empty: () => client.del(key),
    remove: async () => {
      await client.del(key);
      await client.quit();
    },
  };
}

/** Makes a copy's one target deliver into `kind`'s sink instead of its HTTPS URL, before the clock starts. */
const toBroker = (db, kind, address) => async (url) => {
  const column = Object.keys(address)[0];
  const statement = `update webhooks set type = '${kind}', broker = 'w15', url = '', ${column} = '${Object.values(address)[0]}'`;
  if (db === 'pg') return void (await query(url, statement));
  const d = new Database(url.slice('sqlite:'.length));
  try {
    d.exec(statement);
  } finally {
    d.close();
  }
};

/** Polls the sink until it holds `n` messages or the drain's limit passes; the time of that first full count. */
async function holds(s, n, limitMs) {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const count = await s.count();
    if (count >= n) return { count, atNs: nowNs(), partial: false };
    if (performance.now() > deadline) return { count, atNs: nowNs(), partial: true };
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function drainWithSvc(ctx, tpl, s, kind, db, label) {
  const clone = await cloneTemplate(ctx, tpl);
  await toBroker(db, kind, s.address.svc)(clone.url);
  await s.empty();
  const t0 = nowNs();
  let worker = null;
  try {
    worker = await startSvc({ mode: 'worker', databaseUrl: clone.url, env: { SVC_BROKERS: `w15=${W15_BROKERS[kind]}` }, logFile: ctx.logFile(label), cpuProfDir: ctx.cpuProfDir });
    const d = await holds(s, tpl.count, ctx.opts.drainTimeoutMs);
    // The worker's CPU from its spawn to the last message held (start-up included, as in the clock).
    return { seconds: ms(t0, d.atNs) / 1000, count: d.count, partial: d.partial, cpuSeconds: cpuSeconds(worker.pid) };
  } finally {
    await worker?.stop();
    await clone.drop().catch(() => {});
  }
}

async function drainWithBaseline(ctx, tpl, s, kind, label) {
  await s.empty();
  const t0 = nowNs();
  const child = spawnOn(CORES.server, [process.execPath, BASELINE], {
    env: { BENCH_JOBS: tpl.jobsFile, BENCH_KIND: kind, BENCH_URL: W15_BROKERS[kind], BENCH_ADDRESS: s.address.baseline, BENCH_IN_FLIGHT: '8' },
    logFile: ctx.logFile(label),
  });
  try {
    const d = await holds(s, tpl.count, ctx.opts.drainTimeoutMs);
    // NaN once the loop has exited by itself (it does when every message is acknowledged).
    return { seconds: ms(t0, d.atNs) / 1000, count: d.count, partial: d.partial, cpuSeconds: cpuSeconds(child.pid) };
  } finally {
    await stop(child);
  }
}

/**
 * W15: W4's drain (20,000 due jobs of one target, one `svc worker`, the clock from spawning it) into each broker,
 * against a raw loop of the same client with the same acknowledgement and as many in flight (8, svc's per-target
 * default), on SQLite and PostgreSQL. Run only when named. Target ≥ 0.6×.
 */
export async function w15(ctx, dbs) {
  const { opts } = ctx;
  const name = `w15-${process.pid}`;
  for (const db of dbs) {
    // The seed's target is HTTPS (never attempted: --no-worker); each copy is switched to the broker under test.
    const tpl = await seedTemplate(ctx, { kind: db, name: `w15_${db}`, targets: 1, jobs: opts.jobs, receiver: { urls: ['https://127.0.0.1:9/hook'] } });
    for (const kind of ['nats', 'rabbitmq', 'redis']) {
      const s = await sink(kind, name);
      try {
        const rounds = { baseline: [], svc: [] };
        for (let r = 1; r <= opts.rounds; r++) {
          for (const side of ['baseline', 'svc']) {
            const label = `w15-${db}-${kind}-${side}-${r}`;
            const res = side === 'svc' ? await drainWithSvc(ctx, tpl, s, kind, db, label) : await drainWithBaseline(ctx, tpl, s, kind, label);
            res.rate = res.count / res.seconds;
            rounds[side].push(res);
            ctx.progress('W15', `${db} ${kind.padEnd(8)} round ${r}/${opts.rounds} ${side.padEnd(8)} ${Math.round(res.rate)} messages/s (${res.count} in ${res.seconds.toFixed(2)} s${Number.isFinite(res.cpuSeconds) ? `, CPU ${Math.round((res.cpuSeconds * 1e6) / res.count)} µs a message` : ''})${res.partial ? ` — STOPPED at the ${opts.drainTimeoutMs / 1000} s limit` : ''}`);
          }
        }
        ctx.ratioCell({
          workload: 'W15',
          measure: `drain ${tpl.count} jobs into ${kind === 'nats' ? 'NATS JetStream' : kind === 'rabbitmq' ? 'RabbitMQ' : 'Redis Streams'}, ${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, acknowledged messages/s`,
          unit: '/s',
          baseline: rounds.baseline.map((x) => x.rate),
          svc: rounds.svc.map((x) => x.rate),
          min: 0.6,
          raw: rounds,
        });
      } finally {
        await s.remove();
      }
    }
  }
}
