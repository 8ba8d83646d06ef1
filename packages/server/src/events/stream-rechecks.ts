import type { AppError } from '../errors.js';

/** What a re-check needs of a stream: whose it is, how to ask whether that credential still holds, how to end it. */
export interface RecheckedStream {
  readonly req: { readonly owner: string; recheck(): Promise<AppError | null> };
  fail(err: AppError): void;
}

/**
 * The credentials holding event streams, looked up again every `everyMs` while any stream is open: a revoked or
 * deleted token, an ended admin session, a token that lost its scope ends its streams with `event: error` (SPEC §7).
 * One look-up per credential, however many streams it holds; the process that revokes one ends its streams at once
 * (recheckOwner), the others within `everyMs`.
 */
export class StreamRechecks {
  private readonly streams = new Set<RecheckedStream>();
  private timer: NodeJS.Timeout | null = null;
  private rechecking = false;

  constructor(private readonly everyMs: number) {}

  add(stream: RecheckedStream): void {
    this.streams.add(stream);
    this.timer ??= setInterval(() => void this.recheckAll(), this.everyMs);
  }

  delete(stream: RecheckedStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0) this.stop();
  }

  /**
   * Checks one owner's credential now, after it was revoked in this process (a token deleted, a session ended): its
   * streams end before anything committed later reaches them.
   */
  async recheckOwner(owner: string): Promise<void> {
    await this.recheck([...this.streams].filter((s) => s.req.owner === owner));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async recheckAll(): Promise<void> {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      const byOwner = new Map<string, RecheckedStream[]>();
      for (const s of this.streams) byOwner.set(s.req.owner, [...(byOwner.get(s.req.owner) ?? []), s]);
      for (const streams of byOwner.values()) await this.recheck(streams);
    } finally {
      this.rechecking = false;
    }
  }

  private async recheck(streams: readonly RecheckedStream[]): Promise<void> {
    if (streams.length === 0) return;
    const err = await streams[0]!.req.recheck().catch(() => null);
    if (err) for (const s of streams) s.fail(err);
  }
}
