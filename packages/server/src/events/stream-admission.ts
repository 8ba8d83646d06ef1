import { AppError } from '../errors.js';
import { OwnerSlots } from './owner-slots.js';

/** The answer to a stream asked of a process that is closing. */
export const shuttingDown = (): AppError => new AppError('unavailable', 'This process is shutting down; try again.');

/**
 * Who may open an event stream in this process: at most SVC_STREAMS_PER_TOKEN per owner (a token, an admin session),
 * none once the process is closing. Decided once per stream, before anything is written, while a refusal can still
 * be an answer of its own; the place is taken then and given back when the stream ends.
 */
export class StreamAdmission {
  private readonly slots: OwnerSlots;

  constructor(
    private readonly max: number,
    private readonly closing: AbortSignal,
    /** What a refused client is told to wait (Retry-After): by then a stream of its owner may have ended. */
    private readonly retryAfterMs: number,
  ) {
    this.slots = new OwnerSlots(max);
  }

  /** Streams admitted and not yet ended. */
  get open(): number {
    return this.slots.total;
  }

  /** Takes one of the owner's places and returns its release (idempotent), or throws 429 (its limit) or 503 (closing). */
  admit(owner: string): () => void {
    if (!this.slots.free(owner)) {
      throw new AppError('rate_limited', `At most ${this.max} event streams per token in one process; close one first.`, {
        headers: { 'retry-after': String(Math.ceil(this.retryAfterMs / 1000)) },
      });
    }
    if (this.closing.aborted) throw shuttingDown();
    return this.slots.take(owner)!;
  }
}
