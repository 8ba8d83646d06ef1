// The client class itself, not createClient(): createClient builds a prototype method for each of Redis's ~500
// commands (twice: the client's and its MULTI's), 40 ms and a garbage collection at every start of a process with a
// Redis broker, for one command svc sends (XADD, through sendCommand).
import redisClient from '@redis/client/dist/lib/client/index.js';
import type { BrokerSetting } from '../../config/brokers.js';
import { envelopeEvent, expandAddress } from '../address-template.js';
import type { TargetRow } from '../targets-store.js';
import { errorDetail, NOT_CONNECTED, reconnectDelayMs, type BrokerConnection, type ConnectionEvents, type ConnectionLimits, type PublishResult } from './broker-connection.js';
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
 */
export function redisConnection(setting: BrokerSetting, events: ConnectionEvents, timeoutMs: number, limits?: ConnectionLimits): BrokerConnection {
  const maxUnanswered = redisMaxUnanswered(limits);
  const client = new RedisClient({
    url: setting.url,
    disableOfflineQueue: true,
    commandsQueueMaxLength: maxUnanswered,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: (retries: number) => reconnectDelayMs(retries) },
  });
  // Socket errors only (a command's error reply rejects that command); without a listener they would be thrown.
  client.on('error', (err: unknown) => events.state(false, errorDetail(err)));
  client.on('ready', () => events.state(true));
  client.on('reconnecting', () => events.state(false, 'reconnecting'));

  async function publish(target: TargetRow, message: OutgoingMessage, _deadlineMs: number): Promise<PublishResult> {
    if (!client.isReady) return NOT_CONNECTED(setting.name);
    const stream = expandAddress(target.stream ?? '', envelopeEvent(message.body));
    // `id` and `body` last: a header of either name is refused for redis targets at save, and could not shadow them anyway.
    const fields = { ...message.headers, id: message.id, body: message.body };
    const args: Array<string | Buffer> = ['XADD', stream, ...(target.maxLength === null ? [] : ['MAXLEN', '~', String(target.maxLength)]), '*'];
    for (const [field, value] of Object.entries(fields)) args.push(field, value);
    try {
      const entry = await client.sendCommand(args);
      return { ok: true, snippet: String(entry) };
    } catch (err) {
      if (err instanceof Error && err.message === 'The queue is full') {
        return { ok: false, code: 'timeout', message: `Redis has not answered the ${maxUnanswered} commands sent before this one; it was not sent.` };
      }
      if (!client.isReady) return { ok: false, code: 'connection_failed', message: `The connection to the broker "${setting.name}" was lost before the reply (${errorDetail(err)}).` };
      // An error reply: WRONGTYPE (the key holds something else), OOM, a read-only replica…
      return { ok: false, code: 'broker_refused', message: `Redis refused the XADD: ${errorDetail(err)}.` };
    }
  }

  return {
    get connected() {
      return client.isReady;
    },
    start: () => void client.connect().catch(() => {}),
    publish,
    async close() {
      // destroy(), not close(): nothing of ours waits on a reply once the worker has stopped.
      if (client.isOpen) client.destroy();
    },
  };
}
