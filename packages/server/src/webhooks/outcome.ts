import type { AttemptOutcome } from './http-client.js';

/**
 * The one place that decides what an attempt means: delivered, or failed (retry or dead is then the
 * schedule's call) with a stable error code. A 2xx is success; anything else is a failure, 3xx included,
 * because redirects are never followed.
 */
export type Verdict =
  | { kind: 'delivered' }
  | { kind: 'failed'; error: { code: string; message: string }; retryAfterSeconds: number | null };

export function classify(outcome: AttemptOutcome): Verdict {
  if (outcome.kind === 'response') {
    if (outcome.statusCode >= 200 && outcome.statusCode < 300) return { kind: 'delivered' };
    const honoursRetryAfter = outcome.statusCode === 429 || outcome.statusCode === 503;
    return {
      kind: 'failed',
      error: { code: 'http_status', message: `The receiver answered ${outcome.statusCode}.` },
      retryAfterSeconds: honoursRetryAfter ? outcome.retryAfterSeconds : null,
    };
  }
  return { kind: 'failed', error: { code: outcome.code, message: outcome.message }, retryAfterSeconds: null };
}
