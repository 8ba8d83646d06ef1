import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../src/tracing/tracing.js';
import { BROKER_URLS, createBrokerRig, uniqueName, useAmqpChannel, useNatsStream, useRedisClient, type BrokerRig } from '../helpers/broker-rig.js';
import { DIALECTS } from '../helpers/db.js';
import { startOtlpCollector, type OtlpCollector } from '../helpers/otlp-collector.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §15 for broker targets (§14): every publish of a traced event is a producer span of the write's trace, with the
 * messaging conventions' attributes, and the message's own headers carry that span's traceparent (and the caller's
 * tracestate), so a consumer continues the trace under the publish that reached it. The worker's debug line for the
 * attempt names the span.
 */

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

interface LogLine {
  msg: string;
  deliveryId?: string;
  traceId?: string;
  spanId?: string;
  outcome?: string;
}

describe.each(DIALECTS)('tracing of broker deliveries (%s)', (dialect) => {
  let collector: OtlpCollector;
  let tracer: Tracing;
  let rig: BrokerRig | undefined;
  let lines: LogLine[];

  beforeEach(async () => {
    collector = await startOtlpCollector();
    tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, pino({ level: 'silent' }));
    lines = [];
  });
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
    await tracer.shutdown();
    await collector.close();
  });

  const start = async (brokers: string, name: string) => {
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
    rig = await createBrokerRig(dialect, brokers, {}, { logger });
    await rig.waitConnected(name);
    return rig;
  };

  /** A traced write's one delivery: its job, the producer span the collector got, the transaction span above it. */
  const tracedDelivery = async (r: BrokerRig, target: { id: string }) => {
    const res = await r.app.inject({
      method: 'POST',
      url: '/api/v1/collections/issues/records',
      headers: { ...r.auth, traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01`, tracestate: 'vendor=7' },
      payload: { data: { title: 'traced' } },
    });
    expect(res.statusCode, res.body + JSON.stringify(lines.filter((l) => (l as { level?: number }).level! >= 50))).toBe(201);
    const [job] = await r.waitForJobs(target.id, 1, 'delivered');
    await tracer.shutdown();
    const transaction = collector.spans.find((s) => s.name === 'svc.transaction' && s.traceId === TRACE_ID);
    const producers = collector.spans.filter((s) => s.kind === 4);
    expect(producers).toHaveLength(1);
    const span = producers[0]!;
    expect(span).toMatchObject({ traceId: TRACE_ID, parentSpanId: transaction!.spanId, statusCode: 0 });
    expect(span.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'messaging.operation.type': 'send',
      'messaging.message.id': job!.id,
      'svc.delivery.id': job!.id,
      'svc.webhook.id': target.id,
      'svc.attempt.number': 1,
    });
    // The worker's line for the attempt names the same span.
    const line = lines.find((l) => l.msg === 'delivery attempt' && l.deliveryId === job!.id);
    expect(line).toMatchObject({ outcome: 'delivered', traceId: TRACE_ID, spanId: span.spanId });
    return { job: job!, span };
  };

  /** The headers a message carried: the attempt span's own context and the caller's tracestate. */
  const expectTraceHeaders = (headers: Record<string, unknown>, spanId: string) => {
    const sent = TRACEPARENT.exec(String(headers.traceparent));
    expect(sent?.[1]).toBe(TRACE_ID);
    expect(sent?.[2]).toBe(spanId);
    expect(headers.tracestate).toBe('vendor=7');
  };

  describe.skipIf(!BROKER_URLS.nats)('NATS JetStream', () => {
    const stream = uniqueName('SVCTR');
    const prefix = uniqueName('svctr');
    const nats = useNatsStream(stream, prefix);

    it('a publish is a producer span of the write, and the message carries its traceparent', async () => {
      const r = await start(`events=${BROKER_URLS.nats}`, 'events');
      const target = await r.target({ type: 'nats', broker: 'events', subject: `${prefix}.{collection}` });
      const { span } = await tracedDelivery(r, target);
      expect(span.name).toBe(`send ${prefix}.{collection}`);
      expect(span.attributes).toMatchObject({ 'messaging.system': 'nats', 'messaging.destination.name': `${prefix}.{collection}` });
      const { state } = await nats.jsm.streams.info(stream);
      const m = (await nats.jsm.streams.getMessage(stream, { seq: state.last_seq }))!;
      expect(m.subject).toBe(`${prefix}.issues`);
      const headers: Record<string, string> = {};
      for (const [name, values] of m.header) headers[name] = values.join(',');
      expectTraceHeaders(headers, span.spanId);
    });
  });

  describe.skipIf(!BROKER_URLS.amqp)('RabbitMQ', () => {
    const exchange = uniqueName('svctr-x-');
    const queue = uniqueName('svctr-q-');
    const mq = useAmqpChannel({ exchanges: [exchange], queues: [queue] }, async (ch) => {
      await ch.assertExchange(exchange, 'topic', { durable: true });
      await ch.assertQueue(queue, { durable: true });
      await ch.bindQueue(queue, exchange, '#');
    });

    it('a publish is a producer span with its exchange and routing key, and the message carries its traceparent', async () => {
      const r = await start(`mq=${BROKER_URLS.amqp}`, 'mq');
      const target = await r.target({ type: 'rabbitmq', broker: 'mq', exchange, routingKey: '{collection}.{topic}' });
      const { span } = await tracedDelivery(r, target);
      expect(span.name).toBe(`send ${exchange}`);
      expect(span.attributes).toMatchObject({
        'messaging.system': 'rabbitmq',
        'messaging.destination.name': exchange,
        'messaging.rabbitmq.destination.routing_key': '{collection}.{topic}',
      });
      const m = await waitFor(async () => (await mq.ch.get(queue, { noAck: true })) || null, 'the message in the queue');
      expect(m.properties.messageId).toMatch(/^del_/);
      expectTraceHeaders(m.properties.headers ?? {}, span.spanId);
    });
  });

  describe.skipIf(!BROKER_URLS.redis)('Redis Streams', () => {
    const prefix = uniqueName('svctr:');
    const cache = useRedisClient(prefix);

    it('an XADD is a producer span of the write, and the entry carries its traceparent', async () => {
      const r = await start(`cache=${BROKER_URLS.redis}`, 'cache');
      const key = `${prefix}${dialect}`;
      const target = await r.target({ type: 'redis', broker: 'cache', stream: key });
      const { span } = await tracedDelivery(r, target);
      expect(span.name).toBe(`send ${key}`);
      expect(span.attributes).toMatchObject({ 'messaging.system': 'redis', 'messaging.destination.name': key });
      const [entry] = await cache.redis.xRange(key, '-', '+');
      expectTraceHeaders(entry!.message, span.spanId);
    });
  });
});
