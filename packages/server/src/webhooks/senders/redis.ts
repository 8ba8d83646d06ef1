// The client class itself, not createClient(): createClient builds a prototype method for each of Redis's ~500
// commands (twice: the client's and its MULTI's), 40 ms and a garbage collection at every start of a process with a
// Redis broker, for one command svc sends (XADD, through sendCommand).
import redisClient from '@redis/client/dist/lib/client/index.js';
import { ErrorReply } from '@redis/client/dist/lib/errors.js';
import type { BrokerSetting } from '../../config/brokers.js';
import { envelopeEvent, expandAddress } from '../address-template.js';
import type { TargetRow } from '../targets-store.js';
import { errorDetail, NOT_CONNECTED, reconnectDelayMs, silenceMs, type BrokerConnection, type ConnectionEvents, type ConnectionLimits, type PublishResult } from './broker-connection.js';
import type { OutgoingMessage } from './sender.js';

// A CommonJS module's `exports.default`: Node (and the bundle) give the module's exports as the default import,
// Vite's test runner the `default` they hold.
type RedisClientClass = typeof redisClient.default;
const RedisClient: RedisClientClass = (redisClient as { default?: RedisClientClass }).default ?? (redisClient as unknown as RedisClientClass);

/**
 * Commands written or waiting to be, at most, per connection: four times the attempts the process makes at once
 * (SVC_WEBHOOK_CONCURRENCY), so a Redis that answers never meets it. A Redis that accepts bytes and never answers
 * (stopped, paused, a stalled host: its kernel keeps the connection up) would otherwise keep every attempt's XADD, its
 * body included, for as long as the outage lasts: each attempt times out and is tried again, and the client queues
 * the next one. Past the bound an attempt fails at once (`timeout`, like the ones before it), holding nothing.
 */
export const redisMaxUnanswered = (limits?: ConnectionLimits): number => 4 * (limits?.concurrency ?? 64);

/**
 * Redis Streams (SPEC §14): one `XADD <stream> [MAXLEN ~ n] * …` per attempt, its reply (the entry id) is success.
 * The entry's fields are the message's headers, `id` (the delivery id: Redis has no de-duplication of its own, so the
 * consumer keys on it) and `body` (the envelope's bytes).
 *
 * The client reconnects by itself, the first connection included (connect() keeps trying until it succeeds). Commands
 * are never queued while it is down (disableOfflineQueue): an attempt then fails at once with `connection_failed`
 * instead of waiting for a broker that may not come back within the attempt.
 *
 * The client never gives up on a Redis that takes bytes and does not answer (nor on a handshake it sent there): a
 * watchdog does, every third of BROKER_SILENCE_MS. It sends a PING when nothing is waiting, and drops the client whose
 * commands (or handshake) have waited half of it with no reply at all, for a new one: the silent connection is replaced
 * 10-15 s after Redis's last answer, and the attempts waiting on it fail then, `connection_failed`.
 */
export function redisConnection(setting: BrokerSetting, events: ConnectionEvents, timeoutMs: number, limits?: ConnectionLimits): BrokerConnection {
  const maxUnanswered = redisMaxUnanswered(limits);
  const silence = silenceMs(limits);
  let watchdog: NodeJS.Timeout | null = null;

  /** One client and what the watchdog knows of it. */
  interface Link {
    client: InstanceType<RedisClientClass>;
    /** Commands sent and not settled. */
    unanswered: number;
    /** performance.now() of Redis's last reply, or of the first command sent since it last had none waiting. */
    heardAt: number;
    /** Connected, its handshake (CLIENT SETINFO) unanswered. */
    handshaking: boolean;
  }

  const newLink = (): Link => {
    const client = new RedisClient({
      url: setting.url,
      disableOfflineQueue: true,
      commandsQueueMaxLength: maxUnanswered,
      socket: { connectTimeout: timeoutMs, reconnectStrategy: (retries: number) => reconnectDelayMs(retries) },
    });
    const l: Link = { client, unanswered: 0, heardAt: performance.now(), handshaking: false };
    // A client given up by the watchdog says nothing more of the connection's state.
    const report = (up: boolean, detail?: string) => link === l && events.state(up, detail);
    // Socket errors only (a command's error reply rejects that command); without a listener they would be thrown.
    client.on('error', (err: unknown) => {
      l.handshaking = false;
      report(false, errorDetail(err));
    });
    client.on('connect', () => {
      l.handshaking = true;
      l.heardAt = performance.now();
    });
    client.on('ready', () => {
      l.handshaking = false;
      l.heardAt = performance.now();
      report(true);
    });
    client.on('reconnecting', () => report(false, 'reconnecting'));
    return l;
  };
  let link = newLink();

  /** `args` on the link's client, for the watchdog's count: any reply, an error reply too, is Redis answering. */
  async function send(l: Link, args: Array<string | Buffer>): Promise<unknown> {
    if (l.unanswered === 0) l.heardAt = performance.now();
    l.unanswered += 1;
    try {
      const reply = await l.client.sendCommand(args);
      l.heardAt = performance.now();
      return reply;
    } catch (err) {
      if (err instanceof ErrorReply) l.heardAt = performance.now();
      throw err;
    } finally {
      l.unanswered -= 1;
    }
  }

  function watch(): void {
    const l = link;
    const silentMs = performance.now() - l.heardAt;
    if ((l.handshaking || l.unanswered > 0) && silentMs >= silence / 2) {
      link = newLink();
      events.state(false, `unanswered for ${Math.round(silentMs)} ms`);
      // Rejects every command waiting on it: isReady is false by then, so their attempts are connection_failed.
      l.client.destroy();
      void link.client.connect().catch(() => {});
    } else if (l.client.isReady && l.unanswered === 0) {
      void send(l, ['PING']).catch(() => {});
    }
  }

  async function publish(target: TargetRow, message: OutgoingMessage, _deadlineMs: number): Promise<PublishResult> {
    const l = link;
    if (!l.client.isReady) return NOT_CONNECTED(setting.name);
    const stream = expandAddress(target.stream ?? '', envelopeEvent(message.body));
    // `id` and `body` last: a header of either name is refused for redis targets at save, and could not shadow them anyway.
    const fields = { ...message.headers, id: message.id, body: message.body };
    const args: Array<string | Buffer> = ['XADD', stream, ...(target.maxLength === null ? [] : ['MAXLEN', '~', String(target.maxLength)]), '*'];
    for (const [field, value] of Object.entries(fields)) args.push(field, value);
    try {
      const entry = await send(l, args);
      return { ok: true, snippet: String(entry) };
    } catch (err) {
      if (err instanceof Error && err.message === 'The queue is full') {
        return { ok: false, code: 'timeout', message: `Redis has not answered the ${maxUnanswered} commands sent before this one; it was not sent.` };
      }
      if (!l.client.isReady) return { ok: false, code: 'connection_failed', message: `The connection to the broker "${setting.name}" was lost before the reply (${errorDetail(err)}).` };
      // An error reply: WRONGTYPE (the key holds something else), OOM, a read-only replica…
      return { ok: false, code: 'broker_refused', message: `Redis refused the XADD: ${errorDetail(err)}.` };
    }
  }

  return {
    get connected() {
      return link.client.isReady;
    },
    start() {
      void link.client.connect().catch(() => {});
      watchdog = setInterval(watch, silence / 3);
      watchdog.unref();
    },
    publish,
    async close() {
      if (watchdog !== null) clearInterval(watchdog);
      // destroy(), not close(): nothing of ours waits on a reply once the worker has stopped.
      if (link.client.isOpen) link.client.destroy();
    },
  };
}
