import type { AttemptErrorCode } from '../errors.js';

/**
 * The one place that decides what an attempt means (docs/delivery-states.md, "What an attempt means": every row of
 * that table is a case of decision.test.ts). Pure: the facts go in, exactly one decision comes out.
 */

/** What happened, as the sender saw it; or svc's own reason not to make the attempt at all. */
export type AttemptResult =
  | { kind: 'response'; statusCode: number; retryAfterSeconds: number | null }
  /** A broker acknowledged the message durably (SPEC §14): a JetStream PubAck, a RabbitMQ confirm, an XADD reply. */
  | { kind: 'accepted' }
  | { kind: 'failure'; code: AttemptErrorCode; message: string }
  | { kind: 'not-attempted'; reason: NotAttemptedReason };

/** Never the receiver's fault, so never an attempt used: the job goes back to pending as it was. */
export type NotAttemptedReason = 'shutdown' | 'lease-lapsing' | 'target-unavailable' | 'secret-unavailable';

export interface AttemptFacts {
  result: AttemptResult;
  /** This attempt's number within its round: 1 for the round's first. */
  attemptInRound: number;
  /** SVC_WEBHOOK_RETRY_SCHEDULE in ms: the delay before each attempt of a round; its length is the round's attempts. */
  schedule: readonly number[];
  now: number;
  /** A number in [0, 1): where in ±10 % this wait lands. */
  jitter: number;
}

export type AttemptError = { code: AttemptErrorCode; message: string };

export type Decision =
  | { kind: 'delivered' }
  /** `disable: 'gone'`: the receiver answered 410, so its target is disabled at once and this job waits with the rest. */
  | { kind: 'retry'; at: number; error: AttemptError; disable?: 'gone' }
  | { kind: 'dead'; error: AttemptError }
  | { kind: 'not-attempted'; reason: NotAttemptedReason };

export const RETRY_AFTER_CAP_SECONDS = 3600;

export function decide(facts: AttemptFacts): Decision {
  const { result } = facts;
  if (result.kind === 'not-attempted') return result;
  if (result.kind === 'accepted') return { kind: 'delivered' };
  if (result.kind === 'response' && result.statusCode >= 200 && result.statusCode < 300) return { kind: 'delivered' };
  // Anything else failed, 3xx included: redirects are never followed.
  const error: AttemptError =
    result.kind === 'response' ? { code: 'http_status', message: `The receiver answered ${result.statusCode}.` } : { code: result.code, message: result.message };
  const gone = result.kind === 'response' && result.statusCode === 410;
  if (facts.attemptInRound >= facts.schedule.length) {
    // 410 Gone disables the target (SPEC §10): even the round's last attempt leaves its job pending, waiting like
    // every job of a disabled target, due at once when the target is enabled again (its next failure ends it dead).
    return gone ? { kind: 'retry', at: facts.now, error, disable: 'gone' } : { kind: 'dead', error };
  }
  const base = facts.schedule[facts.attemptInRound]!;
  // ±10 % spreads a burst of failures so they do not all come back in the same millisecond; a 0s step stays 0.
  let wait = base === 0 ? 0 : Math.round(base * (0.9 + 0.2 * facts.jitter));
  const honoursRetryAfter = result.kind === 'response' && (result.statusCode === 429 || result.statusCode === 503);
  if (honoursRetryAfter && result.retryAfterSeconds !== null) {
    // Lengthens the wait, never shortens it, and never beyond the cap.
    wait = Math.max(wait, Math.min(result.retryAfterSeconds, RETRY_AFTER_CAP_SECONDS) * 1000);
  }
  return gone ? { kind: 'retry', at: facts.now + wait, error, disable: 'gone' } : { kind: 'retry', at: facts.now + wait, error };
}
