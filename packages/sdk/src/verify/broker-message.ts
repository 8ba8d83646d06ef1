import type { WebhookEnvelope } from './envelope.js';
import type { HeaderRecord } from './headers.js';
import { fail } from './read-delivery.js';
import type { RawBody } from './signature.js';
import { verifyDelivery, type VerifyDeliveryOptions } from './verify-delivery.js';

/**
 * Messages svc publishes into NATS JetStream, RabbitMQ or Redis Streams (a target of type `nats`, `rabbitmq` or
 * `redis`) carry the same signature headers as an HTTPS delivery, as the broker's own headers: NATS message headers,
 * the AMQP `headers` table, or Redis stream fields beside `body` and `id`. These helpers turn what a broker client
 * hands a consumer into the headers and body `verifyDelivery` and `handleDelivery` take.
 */

/** NATS `msg.headers` (`MsgHdrs`): its names as sent, each value by name. */
export interface NatsHeadersLike {
  keys(): Iterable<string>;
  get(name: string): string;
}

/**
 * The headers as a broker client gives them: a NATS `MsgHdrs`, an AMQP `msg.properties.headers` table (values may
 * arrive as Buffers or numbers), or a Redis entry's fields (`message` of an `XRANGE`/`XREAD` entry).
 */
export type BrokerHeaders = NatsHeadersLike | Readonly<Record<string, unknown>>;

const decoder = new TextDecoder();

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value instanceof Uint8Array) return decoder.decode(value);
  return undefined;
}

const isNats = (h: BrokerHeaders): h is NatsHeadersLike =>
  typeof (h as { keys?: unknown }).keys === 'function' && typeof (h as { get?: unknown }).get === 'function';

/**
 * A broker message as a delivery: its headers as a plain record of strings, and its body: `body` when given, else a
 * Redis entry's `body` field (then left out of the headers).
 */
export function brokerDelivery(headers: BrokerHeaders, body?: RawBody): { headers: HeaderRecord; rawBody: RawBody } {
  const record: Record<string, string> = {};
  if (isNats(headers)) {
    if (body === undefined) throw new TypeError('a NATS message: pass its data as body');
    for (const name of headers.keys()) record[name] = headers.get(name);
    return { headers: record, rawBody: body };
  }
  for (const [name, value] of Object.entries(headers)) {
    const v = text(value);
    if (v !== undefined && !(body === undefined && name === 'body')) record[name] = v;
  }
  if (body !== undefined) return { headers: record, rawBody: body };
  const field = text(headers.body);
  if (field === undefined) fail('malformed_body', 'the entry has no body field');
  return { headers: record, rawBody: field };
}

export interface VerifyBrokerMessageOptions extends Omit<VerifyDeliveryOptions, 'headers' | 'rawBody'> {
  headers: BrokerHeaders;
  /** The message's payload exactly as received; for a Redis entry it may be left out (its `body` field). */
  body?: RawBody;
}

/**
 * Authenticates a message svc published into a broker and returns its envelope, as `verifyDelivery` does for an
 * HTTPS delivery (same options, same errors). A Redis entry's `id` field, like `Svc-Delivery`, is not signed: one
 * that differs from the envelope's id is refused (`id_mismatch`).
 */
export async function verifyBrokerMessage(options: VerifyBrokerMessageOptions): Promise<WebhookEnvelope> {
  const { headers, body, ...rest } = options;
  const delivery = brokerDelivery(headers, body);
  const envelope = await verifyDelivery({ ...rest, ...delivery });
  const redisId = isNats(headers) ? undefined : text((headers as Record<string, unknown>).id);
  if (redisId !== undefined && redisId !== envelope.id) fail('id_mismatch', 'the id field differs from the envelope id');
  return envelope;
}
