import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { sql } from 'kysely';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { BROKER_URLS, createBrokerRig, uniqueName, type BrokerRig } from '../helpers/broker-rig.js';
import { reconnectDelayMs } from '../../src/webhooks/senders/broker-connection.js';
import { rabbitmqConnection } from '../../src/webhooks/senders/rabbitmq.js';
import { redisConnection, redisMaxUnanswered } from '../../src/webhooks/senders/redis.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { DIALECTS } from '../helpers/db.js';
import { exited } from '../helpers/processes.js';
import { freePort, portOpen, startTestServer } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A broker down, then back (SPEC §14): nothing is lost. While it is down every attempt fails at once with
 * connection_failed and waits its retry; svc's connection comes back by itself, and every job is delivered, each
 * exactly once in the broker where the broker de-duplicates (JetStream) and once per delivery id elsewhere. NATS: a
 * nats-server of the test's own, stopped and started again on its store. RabbitMQ and Redis, shared with other
 * tests: a TCP proxy in front of them that refuses connections and cuts the open ones.
 */

// Enough attempts to outlast an outage of a few seconds plus a reconnect backoff (at most 5 s): about 20 s.
const SCHEDULE = '0s,100ms,200ms,400ms,800ms,1s,1s,2s,2s,2s,2s,2s,2s,2s,2s';
const BEFORE = 50;
const DURING = 100;

/** Failed attempts of the target's jobs, by error code. */
async function failedAttempts(rig: BrokerRig, webhookId: string): Promise<Record<string, number>> {
  const rows = (
    await sql<{ code: string; n: number }>`select a.error_code as code, count(*) as n from delivery_attempts a join delivery_jobs j on j.id = a.job_id
      where j.webhook_id = ${webhookId} and a.error_code is not null group by a.error_code`.execute(rig.ctx.database.db)
  ).rows;
  return Object.fromEntries(rows.map((r) => [r.code, Number(r.n)]));
}

/** The outage itself, the same for every broker: deliver, go down, write meanwhile, come back, everything arrives. */
async function outage(rig: BrokerRig, broker: string, webhookId: string, down: () => Promise<void>, up: () => Promise<void>) {
  await rig.createRecords(BEFORE);
  await rig.waitForJobs(webhookId, BEFORE, 'delivered');
  await down();
  await rig.waitConnected(broker, false);
  await rig.createRecords(DURING);
  // Attempts made while it is down fail at once, with the code that says so.
  await waitFor(async () => ((await failedAttempts(rig, webhookId)).connection_failed ?? 0) >= DURING, 'an attempt of each job to fail', 20_000, 50);
  await up();
  await rig.waitConnected(broker, true);
  const jobs = await rig.waitForJobs(webhookId, BEFORE + DURING, 'delivered', 60_000);
  return { jobs, failed: await failedAttempts(rig, webhookId) };
}

describe.each(DIALECTS)('broker outages (%s)', (dialect) => {
  let rig: BrokerRig | null = null;
  let proxy: TcpProxy | null = null;
  afterEach(async () => {
    await rig?.close();
    await proxy?.close();
    rig = null;
    proxy = null;
  });

  it.skipIf(!BROKER_URLS.nats)('NATS: its own nats-server, unreachable at svc\'s start, stopped and started again: every job stored once', async () => {
    const port = await freePort();
    const store = mkdtempSync(join(tmpdir(), 'svc-nats-'));
    let server: ChildProcess | null = null;
    const startServer = async () => {
      server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
      await waitFor(() => portOpen(port), `nats-server on ${port}`, 20_000, 50);
    };
    const stopServer = async () => {
      const s = server!;
      s.kill('SIGTERM');
      await exited(s);
    };
    try {
      // No server yet: the start neither waits for it nor fails.
      rig = await createBrokerRig(dialect, `own=nats://127.0.0.1:${port}`, { SVC_WEBHOOK_RETRY_SCHEDULE: SCHEDULE });
      expect(rig.pool.states()).toEqual([{ name: 'own', connected: false }]);
      await startServer();
      await rig.waitConnected('own');
      const nc = await natsConnect({ servers: `127.0.0.1:${port}` });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'OUTAGE', subjects: ['outage.>'] });
      await nc.close();

      const target = await rig.target({ type: 'nats', broker: 'own', subject: 'outage.{topic}' });
      const { jobs, failed } = await outage(rig, 'own', target.id, stopServer, startServer);

      const check = await natsConnect({ servers: `127.0.0.1:${port}` });
      const info = await (await jetstreamManager(check)).streams.info('OUTAGE');
      await check.close();
      // Once each: a delivery published twice (an acknowledgement lost to the stop) is dropped by Nats-Msg-Id.
      expect(info.state.messages).toBe(BEFORE + DURING);
      expect(jobs).toHaveLength(BEFORE + DURING);
      expect(failed.connection_failed).toBeGreaterThanOrEqual(DURING);
      expect(Object.keys(failed).every((code) => code === 'connection_failed' || code === 'timeout')).toBe(true);
    } finally {
      if (server && (server as ChildProcess).exitCode === null) await stopServer();
      rmSync(store, { recursive: true, force: true });
    }
  });

  it.skipIf(!BROKER_URLS.amqp)('RabbitMQ: connections refused and cut, then allowed again: every delivery id in the queue', async () => {
    const upstream = new URL(BROKER_URLS.amqp);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5672) });
    const exchange = uniqueName('svct-outage-');
    const conn = await amqp.connect(BROKER_URLS.amqp);
    const ch = await conn.createChannel();
    try {
      await ch.assertExchange(exchange, 'fanout', { durable: true });
      await ch.assertQueue(exchange, { durable: true });
      await ch.bindQueue(exchange, exchange, '');
      rig = await createBrokerRig(dialect, `mq=${proxy.via(BROKER_URLS.amqp)}`, { SVC_WEBHOOK_RETRY_SCHEDULE: SCHEDULE });
      await rig.waitConnected('mq');
      const target = await rig.target({ type: 'rabbitmq', broker: 'mq', exchange });
      const { jobs, failed } = await outage(rig, 'mq', target.id, ...proxyOutage(proxy));
      const ids = new Set<string>();
      for (let m = await ch.get(exchange, { noAck: true }); m !== false; m = await ch.get(exchange, { noAck: true })) ids.add(String(m.properties.messageId));
      expect([...ids].sort()).toEqual(jobs.map((j) => j.id).sort());
      expect(failed.connection_failed).toBeGreaterThanOrEqual(DURING);
    } finally {
      await ch.deleteQueue(exchange).catch(() => {});
      await ch.deleteExchange(exchange).catch(() => {});
      await conn.close();
    }
  });

  it.skipIf(!BROKER_URLS.redis)('Redis: connections refused and cut, then allowed again: every delivery id in the stream', async () => {
    const upstream = new URL(BROKER_URLS.redis);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 6379) });
    const key = uniqueName('svct:outage:');
    const redis = createClient({ url: BROKER_URLS.redis });
    await redis.connect();
    try {
      rig = await createBrokerRig(dialect, `cache=${proxy.via(BROKER_URLS.redis)}`, { SVC_WEBHOOK_RETRY_SCHEDULE: SCHEDULE });
      await rig.waitConnected('cache');
      const target = await rig.target({ type: 'redis', broker: 'cache', stream: key });
      const { jobs, failed } = await outage(rig, 'cache', target.id, ...proxyOutage(proxy));
      const entries = await redis.xRange(key, '-', '+');
      const ids = new Set(entries.map((e) => (e.message as Record<string, string>).id));
      expect([...ids].sort()).toEqual(jobs.map((j) => j.id).sort());
      expect(failed.connection_failed).toBeGreaterThanOrEqual(DURING);
    } finally {
      await redis.del(key);
      await redis.quit();
    }
  });

  it.skipIf(!BROKER_URLS.redis || dialect !== 'sqlite')('Redis that takes bytes and never answers: at most 4 × SVC_WEBHOOK_CONCURRENCY XADDs wait on the connection, the next fails at once as a timeout, and all land once it answers again', async () => {
    const upstream = new URL(BROKER_URLS.redis);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 6379) });
    let connected = false;
    const limits = { concurrency: 16 };
    const bound = redisMaxUnanswered(limits);
    expect(bound).toBe(64);
    const conn = redisConnection({ name: 'cache', kind: 'redis', url: proxy.via(BROKER_URLS.redis) }, { state: (up) => (connected = up) }, 60_000, limits);
    const key = uniqueName('svct-hang-');
    const redis = createClient({ url: BROKER_URLS.redis });
    await redis.connect();
    try {
      conn.start();
      await waitFor(() => connected, 'the connection', 10_000);
      await proxy.setMode('hang');
      const target = { type: 'redis', stream: key, maxLength: null } as unknown as TargetRow;
      const message = (i: number) => ({ id: `del_${String(i).padStart(26, '0')}`, body: Buffer.from(JSON.stringify({ n: i })), headers: {} });
      let settled = 0;
      const waiting = Array.from({ length: bound }, (_, i) => conn.publish(target, message(i), 60_000).finally(() => settled++));
      // The next one is refused by the client's bound while every earlier one is still unanswered: no timer involved.
      const refused = await conn.publish(target, message(bound), 60_000);
      expect(settled).toBe(0);
      expect(refused).toMatchObject({ ok: false, code: 'timeout' });
      await proxy.setMode('pass');
      const results = await Promise.all(waiting);
      expect(results.every((r) => r.ok)).toBe(true);
      expect(await redis.xLen(key)).toBe(bound);
    } finally {
      await conn.close();
      await redis.del(key);
      await redis.quit();
    }
  });

  it.skipIf(!BROKER_URLS.amqp || dialect !== 'sqlite')('RabbitMQ connection cut while publishes wait for their confirms: each attempt is connection_failed, not broker_refused', async () => {
    const upstream = new URL(BROKER_URLS.amqp);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5672) });
    let connected = false;
    const conn = rabbitmqConnection({ name: 'mq', kind: 'rabbitmq', url: proxy.via(BROKER_URLS.amqp) }, { state: (up) => (connected = up) }, 10_000);
    const exchange = uniqueName('svct-cut-');
    const admin = await amqp.connect(BROKER_URLS.amqp);
    const ch = await admin.createChannel();
    try {
      await ch.assertExchange(exchange, 'fanout', { durable: false });
      await ch.assertQueue(exchange, { durable: false });
      await ch.bindQueue(exchange, exchange, '');
      conn.start();
      await waitFor(() => connected, 'the connection', 10_000);
      const target = { type: 'rabbitmq', exchange, routingKey: null } as unknown as TargetRow;
      const message = (i: number) => ({ id: `del_${String(i).padStart(26, '0')}`, body: Buffer.from(JSON.stringify({ n: i })), headers: {} });
      // The exchange's channel is open before the broker stops answering, so the publishes below wait on confirms.
      expect(await conn.publish(target, message(0), 10_000)).toMatchObject({ ok: true });
      await proxy.setMode('hang');
      const waiting = Array.from({ length: 5 }, (_, i) => conn.publish(target, message(i + 1), 10_000));
      await proxy.setMode('refuse');
      proxy.cut();
      const results = await Promise.all(waiting);
      expect(results.map((r) => (r.ok ? 'ok' : r.code))).toEqual(Array(5).fill('connection_failed'));
      expect(results[0]).toMatchObject({ message: expect.stringMatching(/^The connection to the broker "mq" was lost before the confirm/) });
    } finally {
      await conn.close();
      await ch.deleteQueue(exchange).catch(() => {});
      await ch.deleteExchange(exchange).catch(() => {});
      await admin.close();
    }
  });

  it.skipIf(!BROKER_URLS.amqp || dialect !== 'sqlite')('a broker that drops every connection just after it opens is opened again on the backoff, not at once', async () => {
    const upstream = new URL(BROKER_URLS.amqp);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5672) });
    const p = proxy;
    // performance.now() of each report: up (then dropped 5 ms later), and down.
    const reports: Array<{ up: boolean; at: number }> = [];
    const conn = rabbitmqConnection({ name: 'mq', kind: 'rabbitmq', url: p.via(BROKER_URLS.amqp) }, {
      state: (up) => {
        reports.push({ up, at: performance.now() });
        if (up) setTimeout(() => p.cut(), 5);
      },
    }, 10_000);
    try {
      conn.start();
      // Closed once the fourth is dropped, never while its cut may land between amqplib's close and its CloseOk (that
      // close would wait out the 2 s limit, CLOSE_LIMIT_MS, before its socket is destroyed).
      await waitFor(() => reports.filter((r) => r.up).length >= 4 && !reports.at(-1)!.up, 'four connections opened and dropped', 20_000);
    } finally {
      await conn.close();
    }
    // The wait from each drop to the next connection: at least 100, 200, 400 ms (reconnectDelayMs), never none.
    const gaps = reports.flatMap((r, i) => (r.up && i > 0 && !reports[i - 1]!.up ? [Math.round(r.at - reports[i - 1]!.at)] : [])).slice(0, 3);
    expect(gaps).toHaveLength(3);
    gaps.forEach((gap, k) => expect(gap, `gaps ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(reconnectDelayMs(k)));
  });

  it.skipIf(!BROKER_URLS.redis)('svc serve with its broker unreachable: it starts, /readyz is ready, svc_broker_connected says 0, then 1 once it is back', async () => {
    const upstream = new URL(BROKER_URLS.redis);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 6379) });
    await proxy.setMode('refuse');
    const s = await startTestServer({ dialect, env: { SVC_BROKERS: `cache=${proxy.via(BROKER_URLS.redis)}` } });
    try {
      expect((await fetch(`${s.baseUrl}/readyz`)).status).toBe(200);
      const gauge = async () => /svc_broker_connected\{broker="cache"\} (\d)/.exec(await (await fetch(`${s.baseUrl}/metrics`)).text())?.[1];
      expect(await gauge()).toBe('0');
      await proxy.setMode('pass');
      await waitFor(async () => (await gauge()) === '1', 'svc_broker_connected 1', 20_000, 100);
      expect((await fetch(`${s.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

/** Down: new connections refused and the open ones cut, as a broker that stops; up: connections pass again. */
const proxyOutage = (p: TcpProxy): [() => Promise<void>, () => Promise<void>] => [
  async () => {
    await p.setMode('refuse');
    p.cut();
  },
  () => p.setMode('pass'),
];
