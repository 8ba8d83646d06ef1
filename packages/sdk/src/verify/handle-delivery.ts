import type { DedupeStore } from './dedupe-store.js';
import type { WebhookEnvelope } from './envelope.js';
import { WebhookVerificationError } from './errors.js';
import { toHex } from './signature.js';
import { verifyDelivery, type VerifyDeliveryOptions } from './verify-delivery.js';

/** How long a done id is remembered. Longer than svc's whole default retry schedule (about 28 h). */
export const DEFAULT_DEDUPE_TTL_SECONDS = 3 * 86_400;

/**
 * How long a claim protects a running handler. Above svc's attempt timeout (15 s by default), so a slow handler's
 * retry is answered 409; well below the schedule's 5-minute step, so a crashed handler's delivery runs again then.
 */
export const DEFAULT_IN_PROGRESS_TTL_SECONDS = 60;

export interface HandleDeliveryOptions extends VerifyDeliveryOptions {
  store: DedupeStore;
  /** How long a run holds the id before another may take it over; make it longer than your slowest handler. */
  inProgressTtlSeconds?: number;
  /** How long a processed id is remembered, so a redelivery is recognised; default three days. */
  doneTtlSeconds?: number;
  /** @deprecated svc-sdk 0.1's name for `doneTtlSeconds`. */
  ttlSeconds?: number;
}

export type HandleDeliveryResult<T> =
  | { duplicate: false; envelope: WebhookEnvelope; result: T }
  /** Processed by an earlier delivery: answer 2xx and do nothing. */
  | { duplicate: true; envelope: WebhookEnvelope };

function seconds(value: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`${name} must be a number of seconds > 0`);
  }
  return value;
}

function checkStore(store: DedupeStore): void {
  const s = store as Partial<DedupeStore> | undefined;
  if (typeof s?.claim !== 'function' || typeof s.complete !== 'function' || typeof s.release !== 'function') {
    throw new TypeError(
      'store must implement claim, complete and release (DedupeStore changed in svc-sdk 0.2: see its CHANGELOG)',
    );
  }
}

/** Tells this run's claim from any other's; never leaves the store. */
function claimToken(): string {
  return toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
}

/**
 * Verifies, claims the delivery id, and runs `handler` at most once at a time per delivery id, until one run succeeds.
 *
 * - Done earlier: resolves `{ duplicate: true }` without running the handler (answer 2xx).
 * - Held by a run that is still in progress: throws `WebhookVerificationError` `delivery_in_progress`, status 409
 *   (svc retries later; by then the first run has completed, or failed, or its claim has expired).
 * - The handler throws: the claim is released and the error rethrown (answer 5xx; svc's retry runs it again).
 * - The handler succeeds: the id is marked done for `doneTtlSeconds`. If that write fails the error is thrown, though
 *   the handler ran: answering 5xx loses nothing, the retry runs the handler again once the claim expires.
 */
export async function handleDelivery<T>(
  options: HandleDeliveryOptions,
  handler: (envelope: WebhookEnvelope) => Promise<T> | T,
): Promise<HandleDeliveryResult<T>> {
  const { store } = options;
  checkStore(store);
  const { inProgressTtlSeconds = DEFAULT_IN_PROGRESS_TTL_SECONDS } = options;
  const inProgressTtl = seconds(inProgressTtlSeconds, 'inProgressTtlSeconds');
  const doneTtl = seconds(options.doneTtlSeconds ?? options.ttlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS, 'doneTtlSeconds');
  const envelope = await verifyDelivery(options);

  const token = claimToken();
  const outcome = await store.claim(envelope.id, token, inProgressTtl);
  if (outcome === 'done') return { duplicate: true, envelope };
  if (outcome === 'in_progress') {
    throw new WebhookVerificationError(
      'delivery_in_progress',
      `delivery ${envelope.id} is being processed by another run; answer 409 and svc retries it later`,
    );
  }
  if (outcome !== 'claimed') throw new TypeError(`store.claim must resolve a ClaimOutcome, got ${String(outcome)}`);

  let result: T;
  try {
    result = await handler(envelope);
  } catch (error) {
    try {
      await store.release(envelope.id, token);
    } catch (releaseError) {
      // The claim stays until its in-progress TTL passes, answering 409 until then: the caller must know that.
      const message = `handler failed and the claim on ${envelope.id} was not released`;
      throw new AggregateError([error, releaseError], message);
    }
    throw error;
  }
  // A false here means this run outlived its claim and another run took the id over: both ran the handler, and the
  // other one records its own outcome. Nothing is left to undo, so this run's result stands.
  await store.complete(envelope.id, token, doneTtl).catch((error: unknown) => {
    throw new Error(`handler succeeded but ${envelope.id} could not be marked done`, { cause: error });
  });
  return { duplicate: false, envelope, result };
}
