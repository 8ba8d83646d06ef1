import type { Duplex } from 'node:stream';
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { BrokerSetting } from '../../config/brokers.js';
import { envelopeEvent, expandAddress } from '../address-template.js';
import type { TargetRow } from '../targets-store.js';
import { errorDetail, NOT_CONNECTED, silenceMs, Supervisor, type BrokerConnection, type ConnectionEvents, type ConnectionLimits, type PublishResult } from './broker-connection.js';
import type { OutgoingMessage } from './sender.js';

/**
 * RabbitMQ (SPEC §14): a publisher confirm of a `mandatory`, persistent message is success; a message the broker
 * returns (no queue bound for its routing key) is `unroutable`, and so is an exchange that does not exist. The
 * delivery id is the message's `message_id`.
 *
 * amqplib does not reconnect: this does, with a backoff, and opens channels again on demand. One confirm channel per
 * exchange: publishing to a missing exchange closes its channel (404), which fails every publish waiting on that
 * channel, so sharing one channel would let one misconfigured target fail every other target's attempts.
 */

interface ExchangeChannel {
  channel: ConfirmChannel;
  /** Delivery ids the broker returned: a return arrives before the confirm of the same message. */
  returned: Set<string>;
  /** Why the broker closed the channel, when it did (the publishes it fails only say "channel closed"). */
  closedBy: unknown;
}

export function rabbitmqConnection(setting: BrokerSetting, events: ConnectionEvents, timeoutMs: number, limits?: ConnectionLimits): BrokerConnection {
  const url = withHeartbeat(setting.url, Math.max(1, Math.round(silenceMs(limits) / 3_000)));
  let model: ChannelModel | null = null;
  /** Why the broker blocked this connection's publishes (connection.blocked), while it does. */
  let blocked: string | null = null;
  const channels = new Map<string, Promise<ExchangeChannel>>();

  const supervisor = new Supervisor<ChannelModel>(
    () => amqp.connect(url, { timeout: timeoutMs, clientProperties: { connection_name: 'svc' } }),
    async (conn) => {
      // An 'error' is always followed by 'close'; without a listener it would be thrown.
      conn.on('error', () => {});
      // A memory or disk alarm: the broker stops reading publishes, and amqplib would buffer every one meanwhile.
      conn.on('blocked', (reason: unknown) => (blocked = String(reason)));
      conn.on('unblocked', () => (blocked = null));
      const lost = new Promise<unknown>((resolve) => conn.once('close', resolve));
      model = conn;
      supervisor.state(true);
      const err = await lost;
      model = null;
      blocked = null;
      channels.clear();
      return err;
    },
    (conn) => conn.close(),
    events,
    // amqplib settles its close only on the broker's CloseOk. A socket destroyed with an error is its 'error' and
    // 'close' (hold above returns); its close() stays pending, and nothing waits for it any more.
    (conn) => (conn as unknown as { connection: { stream: Duplex } }).connection.stream.destroy(new Error('the broker did not answer the close')),
  );

  function channelFor(conn: ChannelModel, exchange: string): Promise<ExchangeChannel> {
    let opened = channels.get(exchange);
    if (opened) return opened;
    opened = conn.createConfirmChannel().then((channel) => {
      const state: ExchangeChannel = { channel, returned: new Set(), closedBy: null };
      channel.on('return', (msg: { properties: { messageId?: unknown } }) => {
        if (typeof msg.properties.messageId === 'string') state.returned.add(msg.properties.messageId);
      });
      channel.on('error', (err: unknown) => (state.closedBy = err));
      // The next publish to this exchange opens a new one (the exchange may exist by then).
      channel.on('close', () => channels.get(exchange) === opened && channels.delete(exchange));
      return state;
    });
    opened.catch(() => channels.get(exchange) === opened && channels.delete(exchange));
    channels.set(exchange, opened);
    return opened;
  }

  async function publish(target: TargetRow, message: OutgoingMessage, _deadlineMs: number): Promise<PublishResult> {
    const conn = model;
    if (!supervisor.connected || conn === null) return NOT_CONNECTED(setting.name);
    if (blocked !== null) return { ok: false, code: 'connection_failed', message: `The broker "${setting.name}" blocks publishing for now (${blocked}); nothing was sent.` };
    const exchange = target.exchange ?? '';
    const routingKey = target.routingKey === null ? '' : expandAddress(target.routingKey, envelopeEvent(message.body));
    let state: ExchangeChannel;
    try {
      state = await channelFor(conn, exchange);
    } catch (err) {
      return failure(err, exchange);
    }
    const options = { mandatory: true, persistent: true, messageId: message.id, contentType: 'application/json', headers: { ...message.headers } };
    return new Promise<PublishResult>((resolve) => {
      try {
        state.channel.publish(exchange, routingKey, message.body, options, (err: unknown) => {
          const returned = state.returned.delete(message.id);
          if (err && state.closedBy === null) {
            // Closed with no reason of the broker's: a nack, or the connection going (amqplib fails every unconfirmed
            // publish of its channels before the connection's 'close', so the supervisor still says connected here).
            // Judged a turn later, once that 'close' has been handled: else a cut broker was `broker_refused`.
            setImmediate(() => resolve(failure(err, exchange)));
          } else if (err) resolve(failure(state.closedBy, exchange));
          else if (returned) resolve({ ok: false, code: 'unroutable', message: `No queue is bound to the exchange "${exchange}" for the routing key "${routingKey}": the message was returned.` });
          else resolve({ ok: true, snippet: 'confirmed' });
        });
      } catch (err) {
        // The channel closed between taking it and publishing.
        resolve(failure(state.closedBy ?? err, exchange));
      }
    });
  }

  function failure(err: unknown, exchange: string): PublishResult {
    if ((err as { code?: unknown } | null)?.code === 404) return { ok: false, code: 'unroutable', message: `The exchange "${exchange}" does not exist.` };
    if (!supervisor.connected) return { ok: false, code: 'connection_failed', message: `The connection to the broker "${setting.name}" was lost before the confirm (${errorDetail(err)}).` };
    return { ok: false, code: 'broker_refused', message: `RabbitMQ did not confirm the message (${errorDetail(err)}).` };
  }

  return supervisor.connection(publish);
}

/**
 * The URL with a `heartbeat` (seconds) of a third of the silence allowed, unless it names its own: amqplib asks for
 * none, so the broker's (60 s) applied, and it gives a connection up after two heartbeats missed (2-3 of them).
 */
function withHeartbeat(url: string, seconds: number): string {
  if (/[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}heartbeat=${seconds}`;
}
