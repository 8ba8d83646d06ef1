import amqp from 'amqplib';
import { afterEach, describe, expect, it } from 'vitest';
import type { BrokerKind } from '../../src/config/brokers.js';
import { CLOSE_LIMIT_MS, type ConnectionFactory, type ConnectionLimits } from '../../src/webhooks/senders/broker-connection.js';
import { natsConnection } from '../../src/webhooks/senders/nats.js';
import { rabbitmqConnection } from '../../src/webhooks/senders/rabbitmq.js';
import { redisConnection } from '../../src/webhooks/senders/redis.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { BROKER_URLS, uniqueName, useNatsStream, useRedisClient } from '../helpers/broker-rig.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A broker that stops answering while its TCP peer still takes bytes (a paused or stalled host, a network path that
 * drops replies): the proxy's `hang` mode. svc drops such a connection within `silenceMs` of its going silent and
 * opens another, which connects through once the broker answers again; and closing a connection (the worker's stop)
 * never waits on a broker that does not answer for more than CLOSE_LIMIT_MS. No database: the connections alone.
 */

const PREFIX = uniqueName('svctlive');
useNatsStream(uniqueName('SVCTLIVE'), PREFIX);
const redis = useRedisClient(`${PREFIX}:`);

/** The tests' silence: 3 s (RabbitMQ's heartbeat is then 1 s, its least), instead of the default 15 s. */
const SILENCE_MS = 3_000;

interface Case {
  kind: BrokerKind;
  url: string;
  factory: ConnectionFactory;
  /** A target of the kind, and a way to make its destination exist; returns what to remove after. */
  target(): Promise<{ target: TargetRow; cleanup(): Promise<void> }>;
}

const CASES: Case[] = [
  {
    kind: 'rabbitmq',
    url: BROKER_URLS.amqp,
    factory: rabbitmqConnection,
    async target() {
      const queue = uniqueName('svct-live-');
      const admin = await amqp.connect(BROKER_URLS.amqp);
      const ch = await admin.createChannel();
      await ch.assertQueue(queue, { durable: false });
      // The default exchange routes by the queue's name.
      const target = { type: 'rabbitmq', exchange: '', routingKey: queue } as unknown as TargetRow;
      return { target, cleanup: async () => void (await ch.deleteQueue(queue).catch(() => {}), await admin.close()) };
    },
  },
  {
    kind: 'nats',
    url: BROKER_URLS.nats,
    factory: natsConnection,
    async target() {
      return { target: { type: 'nats', subject: `${PREFIX}.${uniqueName('s')}` } as unknown as TargetRow, cleanup: async () => {} };
    },
  },
  {
    kind: 'redis',
    url: BROKER_URLS.redis,
    factory: redisConnection,
    async target() {
      const stream = `${PREFIX}:${uniqueName('s')}`;
      return { target: { type: 'redis', stream, maxLength: null } as unknown as TargetRow, cleanup: async () => void (await redis.redis.del(stream)) };
    },
  },
];

const message = (i: number) => ({ id: `del_${String(i).padStart(26, '0')}`, body: Buffer.from(JSON.stringify({ n: i })), headers: {} });

describe('broker connections that stop answering', () => {
  let proxy: TcpProxy | null = null;
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    await proxy?.close();
    proxy = null;
    close = null;
  });

  async function open(c: Case, limits: ConnectionLimits) {
    const upstream = new URL(c.url);
    const p = (proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port) }));
    const reports: Array<{ up: boolean; at: number }> = [];
    let connected = false;
    const conn = c.factory({ name: 'b', kind: c.kind, url: p.via(c.url) }, { state: (up) => (reports.push({ up, at: performance.now() }), (connected = up)) }, 2_000, limits);
    const { target, cleanup } = await c.target();
    close = async () => {
      await Promise.race([conn.close(), new Promise((r) => setTimeout(r, CLOSE_LIMIT_MS + 1_000))]);
      await cleanup();
    };
    conn.start();
    await waitFor(() => connected, `the ${c.kind} connection`, 10_000);
    expect(await conn.publish(target, message(0), 5_000)).toMatchObject({ ok: true });
    return { p, conn, target, reports, isConnected: () => connected };
  }

  for (const c of CASES) {
    it.skipIf(!c.url)(`${c.kind}: closing while the broker does not answer ends within ${CLOSE_LIMIT_MS} ms`, async () => {
      const { p, conn } = await open(c, { concurrency: 16 });
      // Black-holed before the close: the broker never sees svc's close, nor answers it (amqplib waits for CloseOk).
      await p.setMode('hang');
      const startedAt = performance.now();
      const closed = await Promise.race([conn.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('still waiting'), CLOSE_LIMIT_MS + 3_000))]);
      const tookMs = Math.round(performance.now() - startedAt);
      expect(closed).toBe('closed');
      expect(tookMs).toBeLessThanOrEqual(CLOSE_LIMIT_MS + 500);
      // Nothing of the closed connection stays open at the proxy (the socket was destroyed, not left to the broker).
      await waitFor(() => p.open === 0, 'the connection through the proxy to end', 2_000);
    });

    it.skipIf(!c.url)(`${c.kind}: a connection silent for ${SILENCE_MS} ms is dropped and opened again, and delivers once the broker answers`, async () => {
      const { p, conn, target, reports, isConnected } = await open(c, { concurrency: 16, silenceMs: SILENCE_MS });
      const acceptedBefore = p.accepted;
      await p.setMode('hang');
      const silentFrom = performance.now();
      // An attempt under way when the broker went silent: it ends with the connection, at the latest.
      const waiting = conn.publish(target, message(1), 60_000);
      await waitFor(() => reports.some((r) => !r.up && r.at > silentFrom), 'the silent connection to be dropped', SILENCE_MS + 5_000);
      const droppedAfterMs = Math.round(reports.find((r) => !r.up && r.at > silentFrom)!.at - silentFrom);
      // The bound documented: silenceMs, plus the lateness of a loaded machine's timers.
      expect(droppedAfterMs, `dropped after ${droppedAfterMs} ms`).toBeLessThanOrEqual(SILENCE_MS + 1_000);
      expect(await waiting).toMatchObject({ ok: false });
      // Opened again by itself: a new connection reaches the proxy (and waits there, unanswered).
      await waitFor(() => p.accepted > acceptedBefore, 'a new connection', 10_000);
      await p.setMode('pass');
      await waitFor(isConnected, 'connected again', SILENCE_MS + 10_000);
      await waitFor(async () => (await conn.publish(target, message(2), 5_000)).ok, 'a publish to succeed again', 10_000, 200);
    });
  }
});
