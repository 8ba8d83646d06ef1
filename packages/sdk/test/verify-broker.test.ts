import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { createClient } from 'redis';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { BROKER_URLS, createBrokerRig, uniqueName } from '../../server/test/helpers/broker-rig.js';
import { brokerDelivery, verifyBrokerMessage, WebhookVerificationError } from '../src/verify/index.js';
import { SECRET, signedDelivery } from './helpers/deliveries.js';

/**
 * svc-sdk/verify's broker helper: a message svc published into NATS, RabbitMQ or Redis (SPEC §14) verified from what
 * each client hands a consumer. First with headers signed independently of svc (node:crypto, standardwebhooks), in
 * each client's shape; then, with the brokers on loopback, messages svc itself published, read back with the clients.
 */

/** A NATS `MsgHdrs` as far as the helper uses it: names as sent, a value by exact name. */
const natsShape = (headers: Record<string, string>) => ({ keys: () => Object.keys(headers), get: (name: string) => headers[name] ?? '' });

const expectRefused = async (work: Promise<unknown>, code: string) => {
  const err = await work.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(WebhookVerificationError);
  expect((err as WebhookVerificationError).code).toBe(code);
};

describe('verifyBrokerMessage', () => {
  it('verifies the svc scheme from a NATS header set, an AMQP headers table (Buffer values) and Redis fields', async () => {
    const d = signedDelivery();
    const { 'user-agent': _agent, ...headers } = d.headers;
    const envelope = JSON.parse(d.body);
    expect(await verifyBrokerMessage({ secret: SECRET, headers: natsShape({ ...headers, 'Nats-Msg-Id': d.id }), body: Buffer.from(d.body) })).toEqual(envelope);
    const amqpTable = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)]));
    expect(await verifyBrokerMessage({ secret: SECRET, headers: amqpTable, body: Buffer.from(d.body) })).toEqual(envelope);
    expect(await verifyBrokerMessage({ secret: SECRET, headers: { ...headers, id: d.id, body: d.body } })).toEqual(envelope);
  });

  it('verifies Standard Webhooks headers signed by the standardwebhooks library', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const d = signedDelivery();
    const at = new Date();
    const headers = {
      'content-type': 'application/json',
      'webhook-id': d.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(d.id, at, d.body),
    };
    expect(await verifyBrokerMessage({ secret, headers: { ...headers, id: d.id, body: d.body } })).toEqual(JSON.parse(d.body));
  });

  it('refuses a changed body, another secret, a Redis id field that differs from the envelope, an entry without body', async () => {
    const d = signedDelivery();
    await expectRefused(verifyBrokerMessage({ secret: SECRET, headers: natsShape(d.headers), body: d.body.replace('Crème', 'Creme') }), 'signature_mismatch');
    await expectRefused(verifyBrokerMessage({ secret: 'whsec_other', headers: { ...d.headers, body: d.body } }), 'signature_mismatch');
    await expectRefused(verifyBrokerMessage({ secret: SECRET, headers: { ...d.headers, id: 'del_someoneelse', body: d.body } }), 'id_mismatch');
    await expectRefused(verifyBrokerMessage({ secret: SECRET, headers: { ...d.headers } }), 'malformed_body');
    await expect(verifyBrokerMessage({ secret: SECRET, headers: natsShape(d.headers) })).rejects.toThrow(TypeError);
  });

  it('brokerDelivery gives handleDelivery its headers and body (a Redis body field is not a header)', () => {
    const d = signedDelivery();
    const { headers, rawBody } = brokerDelivery({ ...d.headers, id: d.id, body: d.body, count: 3 });
    expect(rawBody).toBe(d.body);
    expect(headers).toEqual({ ...d.headers, id: d.id, count: '3' });
  });
});

describe('messages svc published, read back with each broker\'s client', () => {
  it.skipIf(!BROKER_URLS.nats || !BROKER_URLS.amqp || !BROKER_URLS.redis)('verify with the secret shown, from NATS, RabbitMQ and Redis', async () => {
    const rig = await createBrokerRig('sqlite', `n=${BROKER_URLS.nats},q=${BROKER_URLS.amqp},r=${BROKER_URLS.redis}`);
    const stream = uniqueName('SDKT');
    const subject = uniqueName('sdkt');
    const exchange = uniqueName('sdkt-');
    const key = uniqueName('sdkt:');
    const nc = await natsConnect({ servers: new URL(BROKER_URLS.nats).host });
    const jsm = await jetstreamManager(nc);
    const conn = await amqp.connect(BROKER_URLS.amqp);
    const ch = await conn.createChannel();
    const redis = createClient({ url: BROKER_URLS.redis });
    await redis.connect();
    try {
      await jsm.streams.add({ name: stream, subjects: [`${subject}.>`] });
      await ch.assertExchange(exchange, 'fanout', { durable: false });
      await ch.assertQueue(exchange, { durable: false });
      await ch.bindQueue(exchange, exchange, '');
      await Promise.all(['n', 'q', 'r'].map((b) => rig.waitConnected(b)));
      const nats = await rig.target({ type: 'nats', broker: 'n', subject: `${subject}.{topic}` });
      const rabbit = await rig.target({ type: 'rabbitmq', broker: 'q', exchange, signatureScheme: 'standard' });
      const red = await rig.target({ type: 'redis', broker: 'r', stream: key, signatureScheme: 'both' });
      await rig.createRecords(1);
      for (const t of [nats, rabbit, red]) await rig.waitForJobs(t.id, 1, 'delivered');

      const m = (await jsm.streams.getMessage(stream, { seq: 1 }))!;
      const fromNats = await verifyBrokerMessage({ secret: nats.secret, headers: m.header, body: m.data });
      const q = await ch.get(exchange, { noAck: true });
      if (q === false) throw new Error('no message in the queue');
      const fromRabbit = await verifyBrokerMessage({ secret: rabbit.secret, headers: q.properties.headers ?? {}, body: q.content });
      const [entry] = await redis.xRange(key, '-', '+');
      const fromRedis = await verifyBrokerMessage({ secret: red.secret, headers: entry!.message });
      for (const envelope of [fromNats, fromRabbit, fromRedis]) expect(envelope).toMatchObject({ topic: 'record.created', collection: 'issues' });
      expect(fromNats.recordId).toBe(fromRedis.recordId);
    } finally {
      await jsm.streams.delete(stream).catch(() => {});
      await ch.deleteQueue(exchange).catch(() => {});
      await ch.deleteExchange(exchange).catch(() => {});
      await conn.close();
      await nc.close();
      await redis.del(key);
      await redis.quit();
      await rig.close();
    }
  });
});
