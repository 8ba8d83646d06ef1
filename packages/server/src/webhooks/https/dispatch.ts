import type { IncomingHttpHeaders } from 'node:http';
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
  const attempt = new Attempt(req.tracer, timeoutMs, clock, signal);
  if (signal?.aborted) return Promise.resolve(attempt.failure('connection_failed', 'The attempt was cancelled.'));
  return new Promise<AttemptOutcome>((resolve) => {
    attempt.start(resolve);
    try {
      agent.dispatch({ origin: req.origin, path: req.path, method: 'POST', headers: req.headers, body: req.tracer.body }, attempt);
    } catch (err) {
      attempt.finish(attempt.failureOf(err), false);
    }
  });
}

/**
 * An attempt in flight, and undici's handler of it: one object with its state in fields and its methods shared,
 * rather than a dozen closures an attempt (W4 with ten targets keeps 64 attempts in flight, and what they hold is
 * what each young-generation collection copies), and one timer an attempt, not two.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly startedAt = performance.now();
  private resolve: ((outcome: AttemptOutcome) => void) | null = null;
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private statusCode = 0;
  private retryAfterSeconds: number | null = null;
  /** When the status line came (performance.now()), or 0. */
  private firstByteAt = 0;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private seen = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly cancel: (() => void) | null;

  constructor(
    private readonly tracer: AttemptTracer,
    private readonly timeoutMs: number,
    private readonly clock: Clock,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.cancel = signal ? () => this.finish(this.failure('connection_failed', 'The attempt was cancelled.'), true) : null;
  }

  start(resolve: (outcome: AttemptOutcome) => void): void {
    this.resolve = resolve;
    this.timer = setTimeout(onDeadline, this.timeoutMs, this);
    if (this.cancel) this.signal!.addEventListener('abort', this.cancel, { once: true });
  }

  private elapsed(): number {
    return Math.round(performance.now() - this.startedAt);
  }

  private trace(failure?: unknown): AttemptTrace {
    return this.tracer.result(failure) ?? NO_TRACE;
  }

  failure(code: FailureCode, message: string, cause?: unknown): AttemptOutcome {
    return { kind: 'failure', code, message, durationMs: this.elapsed(), trace: this.trace(cause) };
  }

  failureOf(err: unknown): AttemptOutcome {
    const { code, message } = describeFailure(err, this.timeoutMs);
    return this.failure(code, message, err);
  }

  private answer(): AttemptOutcome {
    return { kind: 'response', statusCode: this.statusCode, retryAfterSeconds: this.retryAfterSeconds, snippet: snippetOf(Buffer.concat(this.kept)), durationMs: this.elapsed(), trace: this.trace() };
  }

  finish(outcome: AttemptOutcome, abort: boolean): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.cancel) this.signal!.removeEventListener('abort', this.cancel);
    // The request may still be waiting for a connection (our look-up included): it is aborted when it starts.
    if (abort) this.controller?.abort(new AttemptStopped());
    this.resolve!(outcome);
  }

  /**
   * Until the status line: the attempt's deadline. After it: the body only feeds the snippet, so running out of time
   * cuts it short, nothing more; a body that starts right at the deadline still gets BODY_GRACE_MS. The one timer is
   * the attempt's deadline; only when the status line came within BODY_GRACE_MS of it is a second one set.
   */
  deadline(): void {
    this.timer = null;
    if (this.statusCode === 0) return this.finish(this.failure('timeout', `No response within ${this.timeoutMs} ms.`), true);
    const graceLeft = this.firstByteAt + BODY_GRACE_MS - performance.now();
    // Whole milliseconds: Node keeps a timer list per distinct duration, and a fractional one would make a list each time.
    if (graceLeft >= 1) this.timer = setTimeout(onDeadline, Math.ceil(graceLeft), this);
    else this.finish(this.answer(), true);
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (this.settled) c.abort(new AttemptStopped());
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (status < 200 || this.settled) return;
    this.statusCode = status;
    this.firstByteAt = performance.now();
    this.tracer.firstByte();
    this.retryAfterSeconds = parseRetryAfter(headers['retry-after'], this.clock.now());
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.keptBytes < SNIPPET_BYTES + 4) {
      const part = chunk.subarray(0, SNIPPET_BYTES + 4 - this.keptBytes);
      this.kept.push(part);
      this.keptBytes += part.length;
    }
    this.seen += chunk.length;
    // Never a whole large body: the connection is given up instead.
    if (this.seen >= BODY_READ_LIMIT) this.finish(this.answer(), true);
  }

  onResponseEnd(): void {
    this.finish(this.answer(), false);
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    // Cut off mid-body by the peer: what arrived is still worth showing.
    if (this.statusCode !== 0) this.finish(this.answer(), false);
    else this.finish(this.failureOf(err), false);
  }
}

const onDeadline = (attempt: Attempt): void => attempt.deadline();

/** Our own abort of an attempt that already has its outcome; never reported. */
class AttemptStopped extends Error {}
