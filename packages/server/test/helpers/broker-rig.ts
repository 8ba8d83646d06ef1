import { randomBytes } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { createClient } from 'redis';
import { afterAll, beforeAll } from 'vitest';
import { deliveryClientOptions } from '../../src/runtime.js';
import { createDeliveryClient, type DeliveryClient } from '../../src/webhooks/http-client.js';
import { BrokerPool } from '../../src/webhooks/senders/broker-pool.js';
import { routeByType } from '../../src/webhooks/senders/route-by-type.js';
import { DeliveryWorker } from '../../src/webhooks/worker/worker.js';
import { createTestApp, type TestApp } from './app.js';
import type { Dialect } from './db.js';
import { provided } from './required.js';
import { waitFor } from './wait.js';

/**
 * The brokers the broker tests deliver into, as CI starts them on loopback (README, Development). Unset: those tests
 * are skipped, as the SDK's Redis store tests are without SVC_TEST_REDIS_URL (unless SVC_TEST_REQUIRE names them: then
 * an error). Each test uses names of its own (a stream, an exchange and queue, a key prefix) and removes them.
 */
export const BROKER_URLS = {
  nats: provided('nats', process.env.SVC_TEST_NATS_URL ?? ''),
  amqp: provided('amqp', process.env.SVC_TEST_AMQP_URL ?? ''),
  redis: provided('redis', process.env.SVC_TEST_REDIS_URL ?? ''),
};

/** A name no other test (or run) uses: lower-case letters and digits, valid in every broker's names. */
export const uniqueName = (prefix: string): string => `${prefix}${randomBytes(5).toString('hex')}`;

export interface JobRow {
  id: string;
  state: string;
  attempt_count: number;
  last_error_code: string | null;
}

export interface BrokerRig extends TestApp {
  worker: DeliveryWorker;
  pool: BrokerPool;
  auth: Record<string, string>;
  /** Creates a target through the admin API; returns its answer (with the secret). */
  target(payload: Record<string, unknown>): Promise<{ id: string; secret: string; [k: string]: unknown }>;
  /** Creates records in `issues` through /api/v1/batch, 100 a request; returns their ids in order. */
  createRecords(n: number, data?: (i: number) => Record<string, unknown>): Promise<string[]>;
  jobs(webhookId: string): Promise<JobRow[]>;
  /** Waits until the target has `n` jobs and every one is in `state`. */
  waitForJobs(webhookId: string, n: number, state: string, timeoutMs?: number): Promise<JobRow[]>;
  /** Waits until the pool is connected to (or has lost) the named broker. */
  waitConnected(name: string, connected?: boolean): Promise<void>;
  admin(method: string, url: string, payload?: unknown): Promise<{ statusCode: number; body: string; json(): any }>;
}

/** An app and a worker in one process (as `svc serve` runs them) delivering through a broker pool of SVC_BROKERS. */
export async function createBrokerRig(dialect: Dialect, brokers: string, env: Record<string, string> = {}, options: { logger?: Logger } = {}): Promise<BrokerRig> {
  let pool: BrokerPool | null = null;
  let https: DeliveryClient | null = null;
  let worker: DeliveryWorker | null = null;
  const t = await createTestApp(
    dialect,
    { SVC_BROKERS: brokers, SVC_WEBHOOK_RETRY_SCHEDULE: '0s,50ms,50ms', SVC_WEBHOOK_POLL_MS: '50', SVC_WEBHOOK_TIMEOUT_MS: '3000', ...env },
    {
      ...options,
      handoff: (ctx) => {
        pool = new BrokerPool(ctx.config.brokers, { timeoutMs: ctx.config.webhookTimeoutMs, logger: ctx.logger, limits: { concurrency: ctx.config.webhookConcurrency } });
        https = createDeliveryClient(deliveryClientOptions(ctx.config, ctx.resolver));
        return (worker = new DeliveryWorker(ctx, routeByType(https, pool)));
      },
    },
  );
  if (!pool || !worker || !https) throw new Error('the app was built without its worker');
  const p: BrokerPool = pool;
  const w: DeliveryWorker = worker;
  const client: DeliveryClient = https;
  p.start();
  await w.start();
  await t.collection('issues', [
    { name: 'title', type: 'text', required: true },
    { name: 'status', type: 'text' },
  ]);
  const auth = { authorization: `Bearer ${await t.token()}` };
  const admin = (method: string, url: string, payload?: unknown) => t.app.inject({ method: method as 'GET', url, headers: t.admin.headers, payload: payload as object });
  const jobs = async (webhookId: string) =>
    (
      await sql<JobRow>`select id, state, attempt_count, last_error_code from delivery_jobs where webhook_id = ${webhookId} order by id`.execute(t.ctx.database.db)
    ).rows.map((r) => ({ ...r, attempt_count: Number(r.attempt_count) }));
  return {
    ...t,
    worker: w,
    pool: p,
    auth,
    admin,
    async target(payload) {
      const res = await admin('POST', '/admin/v1/webhooks', { name: 'broker target', topics: ['record.created', 'record.updated', 'record.deleted'], ...payload });
      if (res.statusCode !== 201) throw new Error(`target: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async createRecords(n, data = (i) => ({ title: `record ${i}`, status: 'open' })) {
      const ids: string[] = [];
      for (let from = 0; from < n; from += 100) {
        const operations = Array.from({ length: Math.min(100, n - from) }, (_, k) => ({ method: 'POST', collection: 'issues', data: data(from + k) }));
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: auth, payload: { operations } });
        if (res.statusCode !== 200) throw new Error(`batch: ${res.statusCode} ${res.body}`);
        ids.push(...(res.json().results as Array<{ record: { id: string } }>).map((r) => r.record.id));
      }
      return ids;
    },
    jobs,
    async waitForJobs(webhookId, n, state, timeoutMs = 30_000) {
      return waitFor(
        async () => {
          const rows = await jobs(webhookId);
          return rows.length === n && rows.every((r) => r.state === state) ? rows : null;
        },
        `${n} jobs of ${webhookId} ${state}`,
        timeoutMs,
        50,
      );
    },
    async waitConnected(name, connected = true) {
      await waitFor(() => p.states().find((s) => s.name === name)?.connected === connected, `broker ${name} ${connected ? 'connected' : 'lost'}`, 20_000);
    },
    close: async () => {
      await w.stop(1000);
      await client.close();
      await p.close();
      await t.close();
    },
  };
}

/**
 * A JetStream stream of the suite's own (`stream` capturing `<prefix>.>`), made before its tests and deleted after;
 * `jsm` is valid inside them.
 */
export function useNatsStream(stream: string, prefix: string): { readonly jsm: JetStreamManager } {
  let nc: NatsConnection | undefined;
  let jsm: JetStreamManager | undefined;
  beforeAll(async () => {
    nc = await natsConnect({ servers: new URL(BROKER_URLS.nats).host });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
  });
  afterAll(async () => {
    await jsm?.streams.delete(stream).catch(() => {});
    await nc?.close();
  });
  return {
    get jsm() {
      return jsm!;
    },
  };
}

/** A RabbitMQ channel for the suite: `setup` declares its exchanges and queues, which are deleted after its tests. */
export function useAmqpChannel(names: { exchanges: string[]; queues: string[] }, setup: (ch: Channel) => Promise<void>): { readonly ch: Channel } {
  let conn: ChannelModel | undefined;
  let ch: Channel | undefined;
  beforeAll(async () => {
    conn = await amqp.connect(BROKER_URLS.amqp);
    ch = await conn.createChannel();
    await setup(ch);
  });
  afterAll(async () => {
    for (const queue of names.queues) await ch?.deleteQueue(queue).catch(() => {});
    for (const exchange of names.exchanges) await ch?.deleteExchange(exchange).catch(() => {});
    await conn?.close();
  });
  return {
    get ch() {
      return ch!;
    },
  };
}

/** A Redis client for the suite; every key under `prefix` is deleted after its tests. */
export function useRedisClient(prefix: string): { readonly redis: ReturnType<typeof createClient> } {
  let redis: ReturnType<typeof createClient> | undefined;
  beforeAll(async () => {
    redis = createClient({ url: BROKER_URLS.redis });
    await redis.connect();
  });
  afterAll(async () => {
    if (!redis) return;
    for (const key of await redis.keys(`${prefix}*`)) await redis.del(key);
    await redis.quit();
  });
  return {
    get redis() {
      return redis!;
    },
  };
}
