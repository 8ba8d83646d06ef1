import { ClosedConnectionError, connect, DrainingConnectionError, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import type { BrokerSetting } from '../../config/brokers.js';
import { envelopeEvent, expandAddress } from '../address-template.js';
import type { TargetRow } from '../targets-store.js';
import { errorDetail, NOT_CONNECTED, silenceMs, Supervisor, type BrokerConnection, type ConnectionEvents, type ConnectionLimits, type PublishResult } from './broker-connection.js';
import { JetStreamAcks } from './jetstream-acks.js';
import type { OutgoingMessage } from './sender.js';

/**
 * NATS JetStream (SPEC §14). Success is the stream's PubAck; `Nats-Msg-Id` is the delivery id, so a copy published
 * again inside the stream's duplicate window (a lost acknowledgement, a rescued job) is dropped by JetStream itself
 * (the PubAck then says `duplicate`). A subject no stream captures has no responder: `no_stream`.
 *
 * Once connected the client reconnects by itself (maxReconnectAttempts -1, a second apart) and says so in its status
 * events; the first connection, which the client would wait for in connect(), is the Supervisor's to retry.
 */
export function natsConnection(setting: BrokerSetting, events: ConnectionEvents, timeoutMs: number, limits?: ConnectionLimits): BrokerConnection {
  let acks: JetStreamAcks | null = null;
  const lostWith = (detail: string | null) => `The connection to the broker "${setting.name}" was lost before the acknowledgement${detail === null ? '' : ` (${detail})`}.`;
  const lost = lostWith(null);
  const supervisor = new Supervisor<NatsConnection>(
    // noAsyncTraces: the client would otherwise make an Error with a stack trace for each subscription's and request's
    // start, for where a failure began; svc keeps only a failure's code and message.
    // A PING every third of the silence allowed; the client drops the connection (and reconnects) at a tick that finds
    // two still unanswered. Its default is one every 2 minutes.
    () =>
      connect({
        ...connectOptions(setting.url),
        timeout: timeoutMs,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1_000,
        pingInterval: Math.round(silenceMs(limits) / 3),
        maxPingOut: 2,
        name: 'svc',
        noAsyncTraces: true,
      }),
    async (nc) => {
      let current: JetStreamAcks;
      try {
        current = new JetStreamAcks(nc);
      } catch (err) {
        // Closed between the connect and here: given back to the supervisor, which connects again.
        await nc.close().catch(() => {});
        return err;
      }
      acks = current;
      supervisor.state(true);
      void (async () => {
        for await (const s of nc.status()) {
          if (s.type === 'disconnect') {
            supervisor.state(false, 'disconnected');
            current.lost(lost);
          } else if (s.type === 'reconnect') supervisor.state(true);
          else if (s.type === 'error') current.serverError(s.error);
        }
      })();
      const err = await nc.closed();
      acks = null;
      current.close(lost);
      return err;
    },
    // close(), not drain(): a connection that is down has nothing of ours in flight worth waiting for.
    (nc) => nc.close(),
    events,
  );

  async function publish(target: TargetRow, message: OutgoingMessage, deadlineMs: number): Promise<PublishResult> {
    const current = acks;
    if (!supervisor.connected || current === null) return NOT_CONNECTED(setting.name);
    const subject = expandAddress(target.subject ?? '', envelopeEvent(message.body));
    try {
      return await current.publish(subject, message.body, message.id, message.headers, deadlineMs);
    } catch (err) {
      if (!supervisor.connected || err instanceof ClosedConnectionError || err instanceof DrainingConnectionError) {
        return { ok: false, code: 'connection_failed', message: lostWith(errorDetail(err)) };
      }
      // The client refuses a message over the server's max_payload before sending it.
      return { ok: false, code: 'broker_refused', message: `NATS refused the message: ${errorDetail(err)}.` };
    }
  }

  return supervisor.connection(publish);
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
