import type { AttemptErrorCode } from '../../errors.js';
import type { AttemptTrace } from '../connection-trace.js';
import type { TargetRow } from '../targets-store.js';

/**
 * The one interface the worker sends through, whatever the destination (SPEC §5, §14): an HTTPS POST, a JetStream
 * publish, a RabbitMQ confirmed publish, a Redis XADD. A sender reports facts, never a verdict (decision.ts decides),
 * and never throws: every way an attempt can go wrong is an outcome.
 */

/** One attempt's message: the same bytes and headers whichever kind of destination carries them. */
export interface OutgoingMessage {
  /** The delivery id (`del_…`): the de-duplication key, and the broker's own where it has one. */
  readonly id: string;
  /** The envelope's exact bytes, the same for every attempt of the job. */
  readonly body: Buffer;
  /** Lower-case names: the target's static headers, `content-type`, the signature headers of its scheme. */
  readonly headers: Readonly<Record<string, string>>;
}

/** A sender's name for what went wrong: facts, not a verdict. */
export type FailureCode = Extract<
  AttemptErrorCode,
  'timeout' | 'connection_failed' | 'tls_failed' | 'dns_failed' | 'destination_refused' | 'no_stream' | 'unroutable' | 'broker_refused'
>;

export type AttemptOutcome =
  /** An HTTP answer: a status line arrived (any status; 2xx is decided a success elsewhere). */
  | { kind: 'response'; statusCode: number; retryAfterSeconds: number | null; snippet: string; durationMs: number; trace: AttemptTrace }
  /** A broker took the message durably: a JetStream PubAck, a RabbitMQ confirm, an XADD reply. */
  | { kind: 'accepted'; snippet: string; durationMs: number; trace: AttemptTrace }
  | { kind: 'failure'; code: FailureCode; message: string; durationMs: number; trace: AttemptTrace };

export interface DeliverySender {
  /**
   * One attempt of `message` to `target`'s destination. `signal` aborts it when the worker's shutdown grace runs out.
   * The attempt's own deadline (SVC_WEBHOOK_TIMEOUT_MS) is the sender's to keep.
   */
  deliver(target: TargetRow, message: OutgoingMessage, signal: AbortSignal): Promise<AttemptOutcome>;
}
