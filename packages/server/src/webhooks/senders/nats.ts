import { jetstream, JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream';
import { connect, headers as natsHeaders, TimeoutError, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import type { BrokerSetting } from '../../config/brokers.js';
import { envelopeEvent, expandAddress } from '../address-template.js';
import type { TargetRow } from '../targets-store.js';
import { errorDetail, NOT_CONNECTED, Supervisor, type BrokerConnection, type ConnectionEvents, type PublishResult } from './broker-connection.js';
import type { OutgoingMessage } from './sender.js';

/**
 * NATS JetStream (SPEC §14). Success is the stream's PubAck; `Nats-Msg-Id` is the delivery id, so a copy published
 * again inside the stream's duplicate window (a lost acknowledgement, a rescued job) is dropped by JetStream itself
 * (the PubAck then says `duplicate`). A subject no stream captures has no responder: `no_stream`.
 *
 * Once connected the client reconnects by itself (maxReconnectAttempts -1, a second apart) and says so in its status
 * events; the first connection, which the client would wait for in connect(), is the Supervisor's to retry.
 */
export function natsConnection(setting: BrokerSetting, events: ConnectionEvents, timeoutMs: number): BrokerConnection {
  let js: JetStreamClient | null = null;
  const supervisor = new Supervisor<NatsConnection>(
    // noAsyncTraces: the client would otherwise make two Errors with stack traces per publish (a RequestError and a
    // TimeoutError, for where a failure was started); svc keeps only a failure's code and message. 14 % of a
    // worker's CPU publishing into JetStream (W15).
    () => connect({ ...connectOptions(setting.url), timeout: timeoutMs, maxReconnectAttempts: -1, reconnectTimeWait: 1_000, name: 'svc', noAsyncTraces: true }),
    async (nc) => {
      js = jetstream(nc, { timeout: timeoutMs });
      supervisor.state(true);
      void (async () => {
        for await (const s of nc.status()) {
          if (s.type === 'disconnect') supervisor.state(false, 'disconnected');
          else if (s.type === 'reconnect') supervisor.state(true);
        }
      })();
      const err = await nc.closed();
      js = null;
      return err;
    },
    // close(), not drain(): a connection that is down has nothing of ours in flight worth waiting for.
    (nc) => nc.close(),
    events,
  );

  async function publish(target: TargetRow, message: OutgoingMessage, deadlineMs: number): Promise<PublishResult> {
    const client = js;
    if (!supervisor.connected || client === null) return NOT_CONNECTED(setting.name);
    const subject = expandAddress(target.subject ?? '', envelopeEvent(message.body));
    const h = natsHeaders();
    for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
    try {
      const ack = await client.publish(subject, message.body, { msgID: message.id, headers: h, timeout: deadlineMs });
      return { ok: true, snippet: JSON.stringify({ stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate }) };
    } catch (err) {
      if (noResponders(err)) return { ok: false, code: 'no_stream', message: `No JetStream stream captures the subject ${subject} (no responders).` };
      if (!supervisor.connected) return { ok: false, code: 'connection_failed', message: `The connection to the broker "${setting.name}" was lost before the acknowledgement (${errorDetail(err)}).` };
      if (err instanceof TimeoutError) return { ok: false, code: 'timeout', message: `JetStream did not acknowledge within ${deadlineMs} ms.` };
      if (err instanceof JetStreamApiError) return { ok: false, code: 'broker_refused', message: `JetStream refused the message: ${err.message.slice(0, 200)} (${err.code}).` };
      // The client refuses a message over the server's max_payload before sending it.
      return { ok: false, code: 'broker_refused', message: `NATS refused the message: ${errorDetail(err)}.` };
    }
  }

  return supervisor.connection(publish);
}

/**
 * JetStream's error for a request nobody answered (its JetStreamNotEnabled is not exported): the cause is the core
 * client's RequestError that says so. A subject no stream captures, or a server without JetStream.
 */
function noResponders(err: unknown): boolean {
  const cause = (err as { cause?: { isNoResponders?: () => boolean } } | null)?.cause;
  return typeof cause?.isNoResponders === 'function' && cause.isNoResponders();
}

/** nats://user:pass@host:port or nats://token@host:port: the client takes credentials as options, not in the URL. */
function connectOptions(url: string): Partial<ConnectionOptions> {
  const u = new URL(url);
  // `host` keeps an IPv6 literal's brackets and the port when one is written.
  const servers = u.port ? u.host : `${u.host}:4222`;
  const user = decodeURIComponent(u.username);
  const pass = decodeURIComponent(u.password);
  if (user && pass) return { servers, user, pass };
  if (user) return { servers, token: user };
  return { servers };
}
