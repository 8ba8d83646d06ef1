import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';

type Write = (trx: Kysely<Tables>) => Promise<boolean>;

interface Pending {
  write: Write;
  resolve: (applied: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for attempt results. Every finished attempt's transition (complete or fail, with its attempt row)
 * is queued; whatever has queued during a short gathering pause, or while the previous commit was in flight, is
 * written in one transaction. Under load that turns N syncs into one, for about 2 ms of delay. Each write stays
 * its own guarded statement, so a stale lease still changes nothing; if a batch fails as a whole, its writes are
 * retried one by one, so one bad write cannot take the others down with it.
 */
export class ResultWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly maxBatch = 256,
    /**
     * How long a batch gathers before it commits. better-sqlite3 runs a whole transaction without letting a
     * response in, so without a pause most batches would hold one result; 2 ms lets other answers share the sync.
     */
    private readonly gatherMs = 2,
  ) {}

  submit(write: Write): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      if (!this.flushing) this.flushing = this.drain();
    });
  }

  /** Resolves when everything submitted so far is written. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      if (this.gatherMs > 0 && this.queue.length < this.maxBatch) await new Promise((resolve) => setTimeout(resolve, this.gatherMs));
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await this.db.transaction().execute(async (trx) => {
          const out: boolean[] = [];
          for (const p of batch) out.push(await p.write(trx));
          return out;
        });
        batch.forEach((p, i) => p.resolve(results[i]!));
      } catch {
        for (const p of batch) {
          await this.db.transaction().execute(p.write).then(p.resolve, p.reject);
        }
      }
    }
    this.flushing = null;
  }
}
