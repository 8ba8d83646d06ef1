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
 * is queued; whatever has queued while the previous commit was in flight is written in one transaction. Under
 * load that turns N fsyncs into one without delaying a lone result at all. Each write stays its own guarded
 * statement, so a stale lease still changes nothing; if a batch fails as a whole, its writes are retried one by
 * one, so one bad write cannot take the others down with it.
 */
export class ResultWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly maxBatch = 256,
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
