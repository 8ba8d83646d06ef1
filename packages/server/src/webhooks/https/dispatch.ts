import type { Dispatcher } from 'undici';
import type { Clock } from '../../lib/clock.js';
import { NO_TRACE, type AttemptTracer, type AttemptTrace } from '../connection-trace.js';
import type { AttemptOutcome, FailureCode } from '../senders/sender.js';
import { describeFailure } from './failure-codes.js';
import { parseRetryAfter } from './retry-after.js';
import { SNIPPET_BYTES, snippetOf } from './snippet.js';

/** How much of an answer is read: enough to keep small answers' connections alive, never a whole large body. */
export const BODY_READ_LIMIT = 64 * 1024;
/** A body that starts right at the deadline still gets this long to show its first bytes. */
const BODY_GRACE_MS = 1_000;

export interface HttpRequest {
  origin: string;
  path: string;
  headers: Record<string, string>;
  /** The tracer's body: an object of this attempt's own, by which the connection trace knows it. */
  tracer: AttemptTracer;
}

/**
 * One POST straight on undici's dispatcher with a handler of our own: no AbortSignal, no response stream, no async
 * iterator per attempt; the handler keeps the status, Retry-After and the head of the body, and aborts the request
 * itself when a deadline passes, the body runs past BODY_READ_LIMIT or the caller cancels.
 */
export function dispatchAttempt(agent: Dispatcher, req: HttpRequest, timeoutMs: number, clock: Clock, signal?: AbortSignal): Promise<AttemptOutcome> {
  const startedAt = performance.now();
  const elapsed = (): number => Math.round(performance.now() - startedAt);
  const { tracer } = req;
  const trace = (failure?: unknown): AttemptTrace => tracer.result(failure) ?? NO_TRACE;
  const fail = (code: FailureCode, message: string, cause?: unknown): AttemptOutcome => ({ kind: 'failure', code, message, durationMs: elapsed(), trace: trace(cause) });
  if (signal?.aborted) return Promise.resolve(fail('connection_failed', 'The attempt was cancelled.'));

  return new Promise<AttemptOutcome>((resolve) => {
    let controller: Dispatcher.DispatchController | null = null;
    let settled = false;
    let statusCode = 0;
    let retryAfterSeconds: number | null = null;
    const kept: Buffer[] = [];
    const failureOf = (err: unknown): AttemptOutcome => {
      const { code, message } = describeFailure(err, timeoutMs);
      return fail(code, message, err);
    };
    let keptBytes = 0;
    let seen = 0;

    const answer = (): AttemptOutcome => ({ kind: 'response', statusCode, retryAfterSeconds, snippet: snippetOf(Buffer.concat(kept)), durationMs: elapsed(), trace: trace() });
    const finish = (outcome: AttemptOutcome, abort: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      // The request may still be waiting for a connection (our look-up included): it is aborted when it starts.
      if (abort) controller?.abort(new AttemptStopped());
      resolve(outcome);
    };
    // Until the status line: the attempt's deadline. After it: the body only feeds the snippet, so running out
    // of time cuts it short, nothing more; a body that starts right at the deadline still gets BODY_GRACE_MS.
    const onDeadline = (): void => {
      if (statusCode === 0) finish(fail('timeout', `No response within ${timeoutMs} ms.`), true);
      else finish(answer(), true);
    };
    let timer = setTimeout(onDeadline, timeoutMs);
    const cancel = (): void => finish(fail('connection_failed', 'The attempt was cancelled.'), true);
    signal?.addEventListener('abort', cancel, { once: true });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (settled) c.abort(new AttemptStopped());
      },
      onResponseStart(_c, status, headers) {
        if (status < 200 || settled) return;
        statusCode = status;
        tracer.firstByte();
        retryAfterSeconds = parseRetryAfter(headers['retry-after'], clock.now());
        clearTimeout(timer);
        const now = performance.now();
        // Whole milliseconds: Node keeps a timer list per distinct duration, and a fractional one would make a list each time.
        timer = setTimeout(onDeadline, Math.ceil(Math.max(startedAt + timeoutMs, now + BODY_GRACE_MS) - now));
      },
      onResponseData(_c, chunk) {
        if (settled) return;
        if (keptBytes < SNIPPET_BYTES + 4) {
          const part = chunk.subarray(0, SNIPPET_BYTES + 4 - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        }
        seen += chunk.length;
        // Never a whole large body: the connection is given up instead.
        if (seen >= BODY_READ_LIMIT) finish(answer(), true);
      },
      onResponseEnd() {
        finish(answer(), false);
      },
      onResponseError(_c, err) {
        // Cut off mid-body by the peer: what arrived is still worth showing.
        if (statusCode !== 0) finish(answer(), false);
        else finish(failureOf(err), false);
      },
    };
    try {
      agent.dispatch({ origin: req.origin, path: req.path, method: 'POST', headers: req.headers, body: tracer.body }, handler);
    } catch (err) {
      finish(failureOf(err), false);
    }
  });
}

/** Our own abort of an attempt that already has its outcome; never reported. */
class AttemptStopped extends Error {}
