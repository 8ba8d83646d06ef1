import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import type { AttemptRecord } from './queue/attempts-store.js';
import { completeJobs } from './queue/complete-job.js';
import { failJob } from './queue/fail-job.js';

/** A finished attempt's transition: delivered, or failed with the retry delay (null: dead). */
export type AttemptResult =
  | { kind: 'delivered'; jobId: string; attempt: AttemptRecord }
  | { kind: 'failed'; jobId: string; attempt: AttemptRecord & { error: { code: string; message: string } }; delayMs: number | null };

interface Pending {
  result: AttemptResult;
  /** Told whether the write applied (false: the lease was lost), or why it failed. */
  done: (err: unknown, applied: boolean) => void;
}

/**
 * Group commit for attempt results, all under one worker's lease. Whatever queues during a short gathering pause,
 * or while the previous commit is in flight, is written in one transaction: the delivered jobs with one guarded
 * UPDATE and one INSERT of their attempts (on PostgreSQL one statement doing both, see completeJobs), the failed
 * ones (rare under load) one by one. Under load that
 * turns hundreds of statements and syncs into a few, for at most `gatherMs` of delay before the record shows the
 * result (the receiver has its answer long before). A stale lease still changes nothing; if a batch fails as a
 * whole, its results are written one by one, so one bad write cannot take the others down with it.
 */
export class ResultWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly caps: DialectCapabilities,
    private readonly leaseId: string,
    private readonly maxBatch = 256,
    /**
     * How long a batch gathers before it commits. better-sqlite3 runs a whole transaction without letting a
     * response in, so without a pause most batches would hold a handful of results, each batch paying a sync.
     */
    private readonly gatherMs = 10,
  ) {}

  /** Queues a result; `done` hears how its write went (a callback, not a promise: one fewer per delivery). */
  submit(result: AttemptResult, done: Pending['done']): void {
    this.queue.push({ result, done });
    if (!this.flushing) this.flushing = this.drain();
  }

  /** Resolves when everything submitted so far is written. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      if (this.gatherMs > 0 && this.queue.length < this.maxBatch) await new Promise((resolve) => setTimeout(resolve, this.gatherMs));
      const batch = this.queue.splice(0, this.maxBatch);
      let applied: Set<string> | null = null;
      try {
        applied = await this.write(batch);
      } catch {
        // One by one below, so one bad write cannot take the others down with it.
      }
      if (applied) {
        for (const p of batch) p.done(null, applied.has(p.result.jobId));
        continue;
      }
      for (const p of batch) {
        await this.write([p]).then(
          (one) => p.done(null, one.has(p.result.jobId)),
          (err: unknown) => p.done(err, false),
        );
      }
    }
    this.flushing = null;
  }

  /** All delivered (the usual case under load): completeJobs alone, one statement on PostgreSQL. Else one transaction. */
  private async write(batch: readonly Pending[]): Promise<Set<string>> {
    const delivered: Array<Extract<AttemptResult, { kind: 'delivered' }>> = [];
    const failed: Array<Extract<AttemptResult, { kind: 'failed' }>> = [];
    for (const { result } of batch) {
      if (result.kind === 'delivered') delivered.push(result);
      else failed.push(result);
    }
    if (failed.length === 0) return completeJobs(this.db, this.caps, this.leaseId, delivered);
    return this.db.transaction().execute(async (trx) => {
      const applied = await completeJobs(trx, this.caps, this.leaseId, delivered);
      for (const f of failed) {
        if (await failJob(trx, this.caps, f.jobId, this.leaseId, f.attempt, f.delayMs)) applied.add(f.jobId);
      }
      return applied;
    });
  }
}
