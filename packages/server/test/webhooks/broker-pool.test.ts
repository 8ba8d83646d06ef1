import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { pino } from 'pino';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import type { BrokerSetting } from '../../src/config/brokers.js';
import { BrokerPool } from '../../src/webhooks/senders/broker-pool.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { BROKER_URLS, uniqueName } from '../helpers/broker-rig.js';
import { freePort } from '../helpers/server.js';

/**
 * The broker pool on its own (no database): what an attempt meets in a process that has just started, and with a
 * broker it cannot reach.
 */
const logger = pino({ level: 'silent' });
const message = (id: string) => ({ id, body: Buffer.from('{"version":"1","id":"x","topic":"record.created","collection":"issues"}'), headers: { 'content-type': 'application/json' } });
const target = (fields: Partial<TargetRow>) => ({ url: null, subject: null, exchange: null, routingKey: null, stream: null, maxLength: null, ...fields }) as TargetRow;
const signal = () => new AbortController().signal;

describe('BrokerPool', () => {
  let pool: BrokerPool | null = null;
  afterEach(async () => {
    await pool?.close();
    pool = null;
  });
  const start = (settings: BrokerSetting[], timeoutMs = 3_000) => {
    pool = new BrokerPool(settings, { timeoutMs, logger });
    pool.start();
    return pool;
  };

  it.skipIf(!BROKER_URLS.nats || !BROKER_URLS.amqp || !BROKER_URLS.redis)(
    'just started: the first attempts wait for the first connection, and are accepted (not connection_failed)',
    async () => {
      const stream = uniqueName('POOLT');
      const name = uniqueName('poolt-');
      const nc = await natsConnect({ servers: new URL(BROKER_URLS.nats).host });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: stream, subjects: [`${name}.>`] });
      const conn = await amqp.connect(BROKER_URLS.amqp);
      const ch = await conn.createChannel();
      await ch.assertExchange(name, 'fanout', { durable: false });
      await ch.assertQueue(name, { durable: false });
      await ch.bindQueue(name, name, '');
      const redis = createClient({ url: BROKER_URLS.redis });
      await redis.connect();
      try {
        const p = start([
          { name: 'n', kind: 'nats', url: BROKER_URLS.nats },
          { name: 'q', kind: 'rabbitmq', url: BROKER_URLS.amqp },
          { name: 'r', kind: 'redis', url: BROKER_URLS.redis },
        ]);
        // No wait: as a worker claims due jobs the moment it starts.
        const outcomes = await Promise.all([
          p.deliver(target({ type: 'nats', broker: 'n', subject: `${name}.a` }), message(`del_${name}1`), signal()),
          p.deliver(target({ type: 'rabbitmq', broker: 'q', exchange: name }), message(`del_${name}2`), signal()),
          p.deliver(target({ type: 'redis', broker: 'r', stream: name }), message(`del_${name}3`), signal()),
        ]);
        expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted', 'accepted']);
      } finally {
        await jsm.streams.delete(stream).catch(() => {});
        await nc.close();
        await ch.deleteQueue(name).catch(() => {});
        await ch.deleteExchange(name).catch(() => {});
        await conn.close();
        await redis.del(name);
        await redis.quit();
      }
    },
  );

  it('a broker that refuses connections: attempts fail with connection_failed at once, never a timeout', async () => {
    const port = await freePort();
    const p = start(
      [
        { name: 'n', kind: 'nats', url: `nats://127.0.0.1:${port}` },
        { name: 'q', kind: 'rabbitmq', url: `amqp://guest:guest@127.0.0.1:${port}` },
        { name: 'r', kind: 'redis', url: `redis://127.0.0.1:${port}` },
      ],
      10_000,
    );
    const started = performance.now();
    const outcomes = await Promise.all([
      p.deliver(target({ type: 'nats', broker: 'n', subject: 's' }), message('del_1'), signal()),
      p.deliver(target({ type: 'rabbitmq', broker: 'q', exchange: 'x' }), message('del_2'), signal()),
      p.deliver(target({ type: 'redis', broker: 'r', stream: 's' }), message('del_3'), signal()),
      // Twice: the second attempt finds the state known and does not wait at all.
      p.deliver(target({ type: 'redis', broker: 'r', stream: 's' }), message('del_4'), signal()),
    ]);
    for (const o of outcomes) expect(o).toMatchObject({ kind: 'failure', code: 'connection_failed' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(p.states()).toEqual([
      { name: 'n', connected: false },
      { name: 'q', connected: false },
      { name: 'r', connected: false },
    ]);
  });

  it('a target naming a broker this process does not have (or one of another kind): connection_failed, saying so', async () => {
    const p = start([{ name: 'q', kind: 'rabbitmq', url: 'amqp://127.0.0.1:1' }]);
    const unknown = await p.deliver(target({ type: 'nats', broker: 'elsewhere', subject: 's' }), message('del_5'), signal());
    expect(unknown).toMatchObject({ kind: 'failure', code: 'connection_failed' });
    expect((unknown as { message: string }).message).toBe('No nats broker "elsewhere" is configured in this process (SVC_BROKERS).');
    const otherKind = await p.deliver(target({ type: 'nats', broker: 'q', subject: 's' }), message('del_6'), signal());
    expect(otherKind).toMatchObject({ kind: 'failure', code: 'connection_failed' });
  });
});
