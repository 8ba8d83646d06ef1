import type { DedupeStore } from './dedupe-store.js';
import type { WebhookEnvelope } from './envelope.js';
import { verifyDelivery, type VerifyDeliveryOptions } from './verify-delivery.js';

/** Longer than svc's whole default retry schedule (about 28 h), so any redelivery of a job is recognised. */
export const DEFAULT_DEDUPE_TTL_SECONDS = 3 * 86_400;

export interface HandleDeliveryOptions extends VerifyDeliveryOptions {
  store: DedupeStore;
  ttlSeconds?: number;
}

export type HandleDeliveryResult<T> =
  | { duplicate: false; envelope: WebhookEnvelope; result: T }
  /** Already taken by an earlier or concurrent delivery: answer 2xx and do nothing. */
  | { duplicate: true; envelope: WebhookEnvelope };

/**
 * Verifies, claims the delivery id, and runs `handler` once per delivery id. When the handler throws, the claim is
 * released and the error rethrown: answer non-2xx and svc's retry runs the handler again.
 */
export async function handleDelivery<T>(
  options: HandleDeliveryOptions,
  handler: (envelope: WebhookEnvelope) => Promise<T> | T,
): Promise<HandleDeliveryResult<T>> {
  const envelope = await verifyDelivery(options);
  const claimed = await options.store.claim(envelope.id, options.ttlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS);
  if (!claimed) return { duplicate: true, envelope };
  let result: T;
  try {
    result = await handler(envelope);
  } catch (error) {
    try {
      await options.store.release(envelope.id);
    } catch (releaseError) {
      // The claim stays, so retries will look like duplicates: the caller must know that, not just the first error.
      const message = `handler failed and the claim on ${envelope.id} was not released`;
      throw new AggregateError([error, releaseError], message);
    }
    throw error;
  }
  return { duplicate: false, envelope, result };
}
