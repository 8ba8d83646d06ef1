import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables.js';

type Work = (trx: Kysely<Tables>) => Promise<unknown>;

interface Queued {
  work: Work;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Beyond this, a batch waits for the next commit: one sync should not hold a response back for too long. */
const MAX_BATCH = 128;

/**
 * Group commit for an embedded database whose every commit is a sync (SQLite, synchronous=FULL): the write
 * transactions that arrive in the same turn of the event loop run one after another inside one transaction, each
 * inside its own savepoint, and share its commit. Each keeps its own atomicity (a failing one is rolled back to
 * its savepoint and rejected; the others go on), and none resolves before the commit that makes it durable: a
 * client never hears of a write that a power loss could take back. Under concurrent load that turns N syncs into
 * one; a lone write pays one event-loop turn.
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private scheduled = false;

  constructor(private readonly db: Kysely<Tables>) {}

  run<T>(work: (trx: Kysely<Tables>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; err: unknown }> = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        if (batch.length === 1) {
          // Alone: no savepoint needed; its failure rolls the transaction back and is reported below.
          outcomes.push({ ok: true, value: await batch[0]!.work(trx) });
          return;
        }
        for (const item of batch) {
          await sql`savepoint grouped`.execute(trx);
          try {
            const value = await item.work(trx);
            await sql`release savepoint grouped`.execute(trx);
            outcomes.push({ ok: true, value });
          } catch (err) {
            await sql`rollback to savepoint grouped`.execute(trx);
            await sql`release savepoint grouped`.execute(trx);
            outcomes.push({ ok: false, err });
          }
        }
      });
      batch.forEach((item, i) => {
        const o = outcomes[i]!;
        if (o.ok) item.resolve(o.value);
        else item.reject(o.err);
      });
    } catch (err) {
      // The lone write failed, or the commit itself did (disk full, I/O error): nothing of the batch is durable.
      for (const item of batch) item.reject(err);
    } finally {
      if (this.queue.length > 0) setImmediate(() => void this.flush());
      else this.scheduled = false;
    }
  }
}
