import { createInbox, errors, headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { PublishResult } from './broker-connection.js';

interface Waiting {
  resolve: (r: PublishResult) => void;
  /** performance.now() past which the acknowledgement is no longer waited for. */
  until: number;
  deadlineMs: number;
  subject: string;
}

/** How often acknowledgements that never came are given up (the pool's own timer has ended their attempts already). */
const SWEEP_MS = 1_000;

const decoder = new TextDecoder();

/**
 * JetStream publishes with their acknowledgements read from one reply subscription of the connection's own
 * (`_INBOX.<nuid>.*`, a token per publish), which is what the JetStream client does under its `publish()` with a
 * request each: a request object, a deferred, a timer and an `Error` with its stack (made when each finished request's
 * timer is cancelled) per message. Here a publish is a map entry; the deadline is swept once a second. Half the
 * client's CPU per message in a raw loop (W15, bench/README).
 *
 * The message is what `publish(subject, body, { msgID, headers })` sends: the headers and `Nats-Msg-Id`, the reply
 * subject, to the subject itself (a stream captures it; JetStream answers the reply with its PubAck, or an API error;
 * the server answers 503 with no body when nothing captures it). Whatever comes back on the reply subject, however
 * malformed, is read as an answer and never thrown: the callback runs inside the client's socket reader.
 */
export class JetStreamAcks {
  private prefix = '';
  private subscription: Subscription | null = null;
  private readonly waiting = new Map<string, Waiting>();
  private readonly sweeper: NodeJS.Timeout;
  private next = 0;

  /** Throws when the connection cannot take a subscription (closed, draining). */
  constructor(private readonly nc: NatsConnection) {
    this.subscribe();
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  publish(subject: string, body: Uint8Array, id: string, headers: Readonly<Record<string, string>>, deadlineMs: number): Promise<PublishResult> {
    // The server refused the reply subscription (a permission): made again, as the client remakes its own.
    if (this.subscription === null) this.subscribe();
    const h = natsHeaders();
    for (const name of Object.keys(headers)) h.set(name, headers[name]!);
    h.set('Nats-Msg-Id', id);
    const token = (this.next++).toString(36);
    return new Promise<PublishResult>((resolve) => {
      // Throws before anything is sent: a message over the server's max_payload, a connection closing.
      this.nc.publish(subject, body, { reply: `${this.prefix}.${token}`, headers: h });
      this.waiting.set(token, { resolve, until: performance.now() + deadlineMs, deadlineMs, subject });
    });
  }

  /**
   * The connection is gone: what is waiting fails now rather than at its deadline. The client subscribes again after a
   * reconnect, under the same subject, so an acknowledgement sent before the cut may still arrive then; it is dropped,
   * the job is published again, and JetStream drops the copy inside the stream's duplicate window (at least once).
   */
  lost(message: string): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.resolve({ ok: false, code: 'connection_failed', message });
  }

  /**
   * The server's error for the connection (a status event): a publish it refused (a permission on the subject) fails
   * the attempts waiting on that subject with its words, instead of at their deadline as unanswered.
   */
  serverError(err: Error): void {
    if (!(err instanceof errors.PermissionViolationError) || err.operation !== 'publish') return;
    this.fail((w) => w.subject === err.subject, `NATS refused the message: ${err.message.slice(0, 200)}.`);
  }

  close(message: string): void {
    clearInterval(this.sweeper);
    this.subscription?.unsubscribe();
    this.subscription = null;
    this.lost(message);
  }

  private subscribe(): void {
    // svc connects without an inbox prefix of its own: `_INBOX`, as the client's requests use.
    this.prefix = createInbox();
    const prefix = this.prefix;
    this.subscription = this.nc.subscribe(`${prefix}.*`, {
      callback: (err, m) => {
        try {
          if (err === null) this.answered(prefix, m);
          else this.refused(prefix, err);
        } catch {
          // Nothing may escape into the client's reader (it would stop reading the connection).
        }
      },
    });
  }

  /** The server refused the reply subscription itself (the client has closed it): no acknowledgement can come. */
  private refused(prefix: string, err: Error): void {
    if (prefix === this.prefix) this.subscription = null;
    this.fail(() => true, `NATS refused svc's subscription for JetStream's acknowledgements: ${err.message.slice(0, 200)}.`);
  }

  private fail(which: (w: Waiting) => boolean, message: string): void {
    for (const [token, w] of this.waiting) {
      if (!which(w)) continue;
      this.waiting.delete(token);
      w.resolve({ ok: false, code: 'broker_refused', message });
    }
  }

  private answered(prefix: string, m: Msg): void {
    const token = m.subject.slice(prefix.length + 1);
    const w = this.waiting.get(token);
    if (w === undefined) return;
    this.waiting.delete(token);
    w.resolve(pubAck(m, w.subject));
  }

  private sweep(): void {
    const now = performance.now();
    for (const [token, w] of this.waiting) {
      if (w.until > now) continue;
      this.waiting.delete(token);
      w.resolve({ ok: false, code: 'timeout', message: `JetStream did not acknowledge within ${w.deadlineMs} ms.` });
    }
  }
}

type Answer = { stream?: unknown; seq?: unknown; duplicate?: unknown; error?: { description?: unknown; err_code?: unknown } | null };

/** What JetStream answered: its PubAck, an API error, or the server's 503 for a subject no stream captures. */
function pubAck(m: Msg, subject: string): PublishResult {
  if (m.data.length === 0 && m.headers?.code === 503) {
    return { ok: false, code: 'no_stream', message: `No JetStream stream captures the subject ${subject} (no responders).` };
  }
  let answer: unknown;
  try {
    answer = JSON.parse(decoder.decode(m.data));
  } catch {
    answer = undefined;
  }
  // Anything but an object (a core subscriber on the subject answering first, say) is not JetStream's PubAck.
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    return { ok: false, code: 'broker_refused', message: 'The answer to the publish was not a JetStream PubAck.' };
  }
  const ack = answer as Answer;
  if (typeof ack.error === 'object' && ack.error !== null) {
    return { ok: false, code: 'broker_refused', message: `JetStream refused the message: ${String(ack.error.description).slice(0, 200)} (${String(ack.error.err_code)}).` };
  }
  if (typeof ack.stream !== 'string' || ack.stream === '' || typeof ack.seq !== 'number') {
    return { ok: false, code: 'broker_refused', message: 'The answer to the publish was not a JetStream PubAck.' };
  }
  return { ok: true, snippet: JSON.stringify({ stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true }) };
}
