import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findTarget } from '../../src/webhooks/targets-store.js';
import { BROKER_URLS, createBrokerRig, uniqueName, useAmqpChannel, useNatsStream, useRedisClient, type BrokerRig } from '../helpers/broker-rig.js';
import { DIALECTS } from '../helpers/db.js';
import { signatureValid } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Deliveries into real brokers on loopback (SPEC §14), 200 records each: every message stored once, its body the
 * envelope's exact bytes, its headers exactly the scheme's signature headers, content-type and the target's static
 * ones, each signature valid (the svc scheme checked by hand, Standard Webhooks by the standardwebhooks library), and
 * the broker's de-duplication key the delivery id.
 */

const N = 200;
type Headers = Record<string, string>;

/** What every message's body and headers must be, given the jobs svc made and the records it was asked to write. */
function checkMessages(messages: Array<{ body: string; headers: Headers }>, expected: { jobIds: string[]; recordIds: string[]; headerNames: string[] }) {
  expect(messages).toHaveLength(expected.jobIds.length);
  const seen = new Set<string>();
  for (const { body, headers } of messages) {
    const envelope = JSON.parse(body);
    // The exact bytes: svc's envelope is JSON.stringify of the envelope in the seed's field order.
    expect(body).toBe(JSON.stringify(envelope));
    expect(Object.keys(envelope)).toEqual(['version', 'id', 'topic', 'collection', 'recordId', 'payload']);
    expect(envelope).toMatchObject({ version: '1', topic: 'record.created', collection: 'issues' });
    expect(Object.keys(headers).sort()).toEqual([...expected.headerNames].sort());
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-team']).toBe('payments-42');
    for (const id of [headers['svc-delivery'], headers['webhook-id']]) if (id !== undefined) expect(id).toBe(envelope.id);
    seen.add(envelope.id);
    expect(expected.recordIds).toContain(envelope.recordId);
  }
  expect([...seen].sort()).toEqual([...expected.jobIds].sort());
}

describe.each(DIALECTS)('broker deliveries (%s)', (dialect) => {
  describe.skipIf(!BROKER_URLS.nats)('NATS JetStream', () => {
    let rig: BrokerRig;
    const stream = uniqueName('SVCT');
    const prefix = uniqueName('svct');
    const nats = useNatsStream(stream, prefix);
    beforeEach(async () => {
      rig = await createBrokerRig(dialect, `events=${BROKER_URLS.nats}`);
      await rig.waitConnected('events');
      await nats.jsm.streams.purge(stream);
    });
    afterEach(async () => rig.close());
    /** Every message the stream holds, oldest first (a purge keeps the sequence going, so from its first). */
    const stored = async () => {
      const { state } = await nats.jsm.streams.info(stream);
      const all = [];
      for (let seq = state.first_seq; seq <= state.last_seq; seq++) all.push((await nats.jsm.streams.getMessage(stream, { seq }))!);
      return all;
    };

    it(`delivers ${N} records: one stored message each, exact bytes and headers, svc signatures valid, Nats-Msg-Id the delivery id`, async () => {
      const target = await rig.target({ type: 'nats', broker: 'events', subject: `${prefix}.{collection}.{topic}`, headers: { 'x-team': 'payments-42' } });
      const recordIds = await rig.createRecords(N);
      const jobs = await rig.waitForJobs(target.id, N, 'delivered');
      expect(jobs.every((j) => j.attempt_count === 1)).toBe(true);

      const messages: Array<{ body: string; headers: Headers }> = [];
      for (const m of await stored()) {
        expect(m.subject).toBe(`${prefix}.issues.record.created`);
        const headers: Headers = {};
        for (const [name, values] of m.header) headers[name] = values.join(',');
        expect(headers['Nats-Msg-Id']).toBe(headers['svc-delivery']);
        delete headers['Nats-Msg-Id'];
        expect(signatureValid(headers, m.string(), [target.secret])).toBe(true);
        messages.push({ body: m.string(), headers });
      }
      expect((await nats.jsm.streams.info(stream)).state.messages).toBe(N);
      checkMessages(messages, { jobIds: jobs.map((j) => j.id), recordIds, headerNames: ['content-type', 'svc-delivery', 'svc-signature', 'svc-timestamp', 'x-team'] });

      // What the attempt kept: no status, no error, the PubAck as its snippet.
      const detail = (await rig.admin('GET', `/admin/v1/deliveries/${jobs[0]!.id}`)).json();
      expect(detail.attempts).toHaveLength(1);
      expect(detail.attempts[0]).toMatchObject({ statusCode: null, error: null, remoteAddress: null });
      expect(JSON.parse(detail.attempts[0].responseSnippet)).toMatchObject({ stream, duplicate: false });

      // The de-duplication key at work: the same delivery published again is dropped by JetStream.
      const again = await rig.pool.deliver(
        (await findTarget(rig.ctx.database.db, target.id))!,
        { id: jobs[0]!.id, body: Buffer.from(messages[0]!.body), headers: { 'content-type': 'application/json' } },
        new AbortController().signal,
      );
      expect(again).toMatchObject({ kind: 'accepted' });
      expect(JSON.parse((again as { snippet: string }).snippet)).toMatchObject({ duplicate: true });
      expect((await nats.jsm.streams.info(stream)).state.messages).toBe(N);
    });

    it('subscriptions and ordering apply: only matching records, and one record\'s versions in order', async () => {
      const target = await rig.target({
        type: 'nats',
        broker: 'events',
        subject: `${prefix}.{topic}`,
        collections: ['issues'],
        filter: "status = 'open'",
        ordering: 'record',
      });
      const ids = await rig.createRecords(20, (i) => ({ title: `r${i}`, status: i % 2 === 0 ? 'open' : 'closed' }));
      await rig.waitForJobs(target.id, 10, 'delivered');
      const id = ids[0]!;
      for (let v = 2; v <= 8; v++) {
        const res = await rig.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${id}`, headers: rig.auth, payload: { data: { title: `v${v}` } } });
        expect(res.statusCode).toBe(200);
      }
      await rig.waitForJobs(target.id, 17, 'delivered');
      const created: string[] = [];
      const versions: number[] = [];
      const all = await stored();
      expect(all).toHaveLength(17);
      for (const m of all) {
        const envelope = JSON.parse(m.string());
        if (envelope.topic === 'record.created') created.push(envelope.recordId);
        else {
          expect(m.subject).toBe(`${prefix}.record.updated`);
          versions.push(envelope.payload.record.version);
        }
      }
      expect(created.sort()).toEqual(ids.filter((_, i) => i % 2 === 0).sort());
      expect(versions).toEqual([2, 3, 4, 5, 6, 7, 8]);
    });

    it('a subject no stream captures: failed attempts with no_stream, then dead', async () => {
      const target = await rig.target({ type: 'nats', broker: 'events', subject: `${uniqueName('nostream')}.{topic}` });
      await rig.createRecords(1);
      const [job] = await rig.waitForJobs(target.id, 1, 'dead');
      const detail = (await rig.admin('GET', `/admin/v1/deliveries/${job!.id}`)).json();
      expect(detail.lastError.code).toBe('no_stream');
      expect(detail.attempts).toHaveLength(3);
      for (const a of detail.attempts) expect(a).toMatchObject({ statusCode: null, error: { code: 'no_stream' } });
      expect(detail.attempts[0].error.message).toContain('No JetStream stream captures the subject');
    });
  });

  describe.skipIf(!BROKER_URLS.amqp)('RabbitMQ', () => {
    let rig: BrokerRig;
    const exchange = uniqueName('svct-x-');
    const queue = uniqueName('svct-q-');
    const lonely = uniqueName('svct-lonely-');
    const amqpChannel = useAmqpChannel({ exchanges: [exchange, lonely], queues: [queue] }, async (ch) => {
      await amqpChannel.ch.assertExchange(exchange, 'topic', { durable: true });
      await amqpChannel.ch.assertExchange(lonely, 'topic', { durable: true });
      await amqpChannel.ch.assertQueue(queue, { durable: true });
      await amqpChannel.ch.bindQueue(queue, exchange, 'issues.#');
    });
    beforeEach(async () => {
      rig = await createBrokerRig(dialect, `mq=${BROKER_URLS.amqp}`);
      await rig.waitConnected('mq');
      await amqpChannel.ch.purgeQueue(queue);
    });
    afterEach(async () => rig.close());

    it(`delivers ${N} records: confirmed, persistent, message_id the delivery id; Standard Webhooks signatures verified by the library`, async () => {
      const target = await rig.target({
        type: 'rabbitmq',
        broker: 'mq',
        exchange,
        routingKey: '{collection}.{topic}',
        signatureScheme: 'standard',
        headers: { 'x-team': 'payments-42' },
      });
      const recordIds = await rig.createRecords(N);
      const jobs = await rig.waitForJobs(target.id, N, 'delivered');
      const messages: Array<{ body: string; headers: Headers }> = [];
      for (;;) {
        const m = await amqpChannel.ch.get(queue, { noAck: true });
        if (m === false) break;
        expect(m.fields.routingKey).toBe('issues.record.created');
        expect(m.properties).toMatchObject({ deliveryMode: 2, contentType: 'application/json' });
        const headers = Object.fromEntries(Object.entries(m.properties.headers ?? {}).map(([k, v]) => [k, String(v)]));
        expect(m.properties.messageId).toBe(headers['webhook-id']);
        const body = m.content.toString('utf8');
        expect(new Webhook(target.secret).verify(body, headers)).toEqual(JSON.parse(body));
        messages.push({ body, headers });
      }
      checkMessages(messages, { jobIds: jobs.map((j) => j.id), recordIds, headerNames: ['content-type', 'webhook-id', 'webhook-signature', 'webhook-timestamp', 'x-team'] });
      const detail = (await rig.admin('GET', `/admin/v1/deliveries/${jobs[0]!.id}`)).json();
      expect(detail.attempts[0]).toMatchObject({ statusCode: null, error: null, responseSnippet: 'confirmed' });
    });

    it('returned (no queue bound) and a missing exchange are unroutable; neither holds up a good target on the same connection', async () => {
      const returned = await rig.target({ type: 'rabbitmq', broker: 'mq', exchange: lonely, routingKey: '{topic}' });
      const missing = await rig.target({ type: 'rabbitmq', broker: 'mq', exchange: uniqueName('svct-missing-') });
      const good = await rig.target({ type: 'rabbitmq', broker: 'mq', exchange, routingKey: '{collection}.{topic}' });
      await rig.createRecords(5);
      await rig.waitForJobs(good.id, 5, 'delivered');
      const [deadReturned] = await rig.waitForJobs(returned.id, 5, 'dead');
      const [deadMissing] = await rig.waitForJobs(missing.id, 5, 'dead');
      const r = (await rig.admin('GET', `/admin/v1/deliveries/${deadReturned!.id}`)).json();
      expect(r.attempts.map((a: { error: { code: string } }) => a.error.code)).toEqual(['unroutable', 'unroutable', 'unroutable']);
      expect(r.attempts[0].error.message).toContain('the message was returned');
      const m = (await rig.admin('GET', `/admin/v1/deliveries/${deadMissing!.id}`)).json();
      expect(m.lastError).toMatchObject({ code: 'unroutable' });
      expect(m.lastError.message).toContain('does not exist');
      expect((await amqpChannel.ch.checkQueue(queue)).messageCount).toBe(5);
    });
  });

  describe.skipIf(!BROKER_URLS.redis)('Redis Streams', () => {
    let rig: BrokerRig;
    const prefix = uniqueName('svct:');
    const cache = useRedisClient(prefix);
    beforeEach(async () => {
      rig = await createBrokerRig(dialect, `cache=${BROKER_URLS.redis}`);
      await rig.waitConnected('cache');
    });
    afterEach(async () => rig.close());

    it(`delivers ${N} records as XADD entries (body, id, headers; both schemes valid); MAXLEN ~ trims another target's stream`, async () => {
      const key = `${prefix}${dialect}`;
      const target = await rig.target({ type: 'redis', broker: 'cache', stream: `${key}:{collection}`, signatureScheme: 'both', headers: { 'x-team': 'payments-42' } });
      const trimmed = await rig.target({ type: 'redis', broker: 'cache', stream: `${key}:trimmed`, maxLength: 10 });
      const recordIds = await rig.createRecords(N);
      const jobs = await rig.waitForJobs(target.id, N, 'delivered');
      await rig.waitForJobs(trimmed.id, N, 'delivered');

      const entries = await cache.redis.xRange(`${key}:issues`, '-', '+');
      const messages = entries.map((e) => {
        const { body, id, ...headers } = e.message as Record<string, string>;
        expect(id).toBe(headers['svc-delivery']);
        expect(signatureValid(headers, body!, [target.secret])).toBe(true);
        expect(new Webhook(target.secret).verify(body!, headers)).toEqual(JSON.parse(body!));
        return { body: body!, headers };
      });
      checkMessages(messages, {
        jobIds: jobs.map((j) => j.id),
        recordIds,
        headerNames: ['content-type', 'svc-delivery', 'svc-signature', 'svc-timestamp', 'webhook-id', 'webhook-signature', 'webhook-timestamp', 'x-team'],
      });
      const detail = (await rig.admin('GET', `/admin/v1/deliveries/${jobs[0]!.id}`)).json();
      expect(detail.attempts[0].responseSnippet).toBe(entries[0]!.id);
      // Approximate trimming keeps at least 10 and drops whole nodes: fewer than were added.
      const length = await cache.redis.xLen(`${key}:trimmed`);
      expect(length).toBeGreaterThanOrEqual(10);
      expect(length).toBeLessThan(N);
    });

    it('a broker target takes part in auto-disable, recover, replay, health and the rate limit like an https one', async () => {
      await rig.close();
      rig = await createBrokerRig(dialect, `cache=${BROKER_URLS.redis}`, { SVC_WEBHOOK_DISABLE_AFTER: '1ms', SVC_WEBHOOK_DISABLE_MIN_FAILURES: '3' });
      await rig.waitConnected('cache');
      const since = new Date(Date.now() - 60_000).toISOString();
      const key = `${prefix}${dialect}:health`;
      await cache.redis.set(key, 'not a stream yet');
      const target = await rig.target({ type: 'redis', broker: 'cache', stream: key });
      await rig.createRecords(2);
      // Three failed attempts (broker_refused) and the rule disables it.
      await waitFor(async () => (await rig.admin('GET', `/admin/v1/webhooks/${target.id}`)).json().disabledReason === 'failing', 'the target disabled as failing', 20_000, 50);
      await cache.redis.del(key);
      expect((await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { enabled: true })).statusCode).toBe(200);
      expect((await rig.admin('POST', `/admin/v1/webhooks/${target.id}/recover`, { since })).statusCode).toBe(200);
      await rig.waitForJobs(target.id, 2, 'delivered');
      expect(await cache.redis.xLen(key)).toBe(2);
      const stats = (await rig.admin('GET', `/admin/v1/webhooks/${target.id}/stats`)).json();
      expect(stats.attempts.succeeded).toBe(2);
      expect(stats.attempts.failed).toBeGreaterThanOrEqual(3);

      // A target made later gets the events it missed by replay, through its rate limit.
      const late = await rig.target({ type: 'redis', broker: 'cache', stream: `${key}:late`, rateLimit: { perSecond: 1 } });
      expect((await rig.admin('POST', `/admin/v1/webhooks/${late.id}/replay`, { since })).json().jobs).toBe(2);
      await rig.waitForJobs(late.id, 2, 'delivered');
      expect(await cache.redis.xLen(`${key}:late`)).toBe(2);
    });

    it('a key that holds something else than a stream: broker_refused (WRONGTYPE), then dead', async () => {
      const key = `${prefix}${dialect}:string`;
      await cache.redis.set(key, 'not a stream');
      const target = await rig.target({ type: 'redis', broker: 'cache', stream: key });
      await rig.createRecords(1);
      const [job] = await rig.waitForJobs(target.id, 1, 'dead');
      const detail = (await rig.admin('GET', `/admin/v1/deliveries/${job!.id}`)).json();
      expect(detail.lastError.code).toBe('broker_refused');
      expect(detail.lastError.message).toContain('WRONGTYPE');
    });
  });
});
