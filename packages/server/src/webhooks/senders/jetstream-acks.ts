import { createInbox, headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
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
 * the server answers 503 with no body when nothing captures it).
 */
export class JetStreamAcks {
  private readonly prefix: string;
  private readonly waiting = new Map<string, Waiting>();
  private readonly subscription: Subscription;
  private readonly sweeper: NodeJS.Timeout;
  private next = 0;

  constructor(private readonly nc: NatsConnection) {
    // svc connects without an inbox prefix of its own: `_INBOX`, as the client's requests use.
    this.prefix = createInbox();
    // The client sends the subscription again after a reconnect, under the same subject.
    this.subscription = nc.subscribe(`${this.prefix}.*`, {
      callback: (err, m) => {
        if (err === null) this.answered(m);
      },
    });
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  publish(subject: string, body: Uint8Array, id: string, headers: Readonly<Record<string, string>>, deadlineMs: number): Promise<PublishResult> {
    const h = natsHeaders();
    for (const name in headers) h.set(name, headers[name]!);
    h.set('Nats-Msg-Id', id);
    const token = (this.next++).toString(36);
    return new Promise<PublishResult>((resolve) => {
      // Throws before anything is sent: a message over the server's max_payload, a connection closing.
      this.nc.publish(subject, body, { reply: `${this.prefix}.${token}`, headers: h });
      this.waiting.set(token, { resolve, until: performance.now() + deadlineMs, deadlineMs, subject });
    });
  }

  /** The connection is gone: no acknowledgement of what is waiting can come any more (a reply is never sent twice). */
  lost(message: string): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.resolve({ ok: false, code: 'connection_failed', message });
  }

  close(message: string): void {
    clearInterval(this.sweeper);
    this.subscription.unsubscribe();
    this.lost(message);
  }

  private answered(m: Msg): void {
    const token = m.subject.slice(this.prefix.length + 1);
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

/** What JetStream answered: its PubAck, an API error, or the server's 503 for a subject no stream captures. */
function pubAck(m: Msg, subject: string): PublishResult {
  if (m.data.length === 0 && m.headers?.code === 503) {
    return { ok: false, code: 'no_stream', message: `No JetStream stream captures the subject ${subject} (no responders).` };
  }
  let ack: { stream?: unknown; seq?: unknown; duplicate?: unknown; error?: { description?: unknown; err_code?: unknown } };
  try {
    ack = JSON.parse(decoder.decode(m.data)) as typeof ack;
  } catch {
    return { ok: false, code: 'broker_refused', message: 'JetStream answered with something else than a PubAck.' };
  }
  if (ack.error) {
    return { ok: false, code: 'broker_refused', message: `JetStream refused the message: ${String(ack.error.description).slice(0, 200)} (${String(ack.error.err_code)}).` };
  }
  if (typeof ack.stream !== 'string' || ack.stream === '') return { ok: false, code: 'broker_refused', message: 'JetStream answered with an invalid PubAck.' };
  return { ok: true, snippet: JSON.stringify({ stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true }) };
}
