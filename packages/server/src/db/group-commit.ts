import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables.js';

type Work = (trx: Kysely<Tables>) => Promise<unknown>;

interface Queued {
  work: Work;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

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
    try {
      const outcomes = await this.commit(batch);
      batch.forEach((item, i) => {
        const o = outcomes[i]!;
        if (o.ok) item.resolve(o.value);
        else item.reject(o.err);
      });
    } catch (err) {
      // The lone write failed, or the transaction did (a full disk, an I/O error): nothing of the batch is durable,
      // and every write of it hears why (a full disk is 507 storage_full for each, not 500).
      for (const item of batch) item.reject(err);
    } finally {
      if (this.queue.length > 0) setImmediate(() => void this.flush());
      else this.scheduled = false;
    }
  }

  /**
   * One transaction for the batch, its outcomes in order. Begun, committed and rolled back here rather than by
   * Kysely's transaction(): SQLite rolls a transaction back by itself after some failures (SQLITE_FULL, an I/O
   * error), and the rollback Kysely then sends fails with "no transaction is active" — an error that replaced the
   * one that says what happened. The first failure is the one thrown; the rollback is tried either way and the
   * connection released, so the next batch starts clean once space is back.
   */
  private async commit(batch: Queued[]): Promise<Outcome[]> {
    const trx = await this.db.startTransaction().execute();
    try {
      const outcomes = batch.length === 1 ? [{ ok: true as const, value: await batch[0]!.work(trx) }] : await this.grouped(trx, batch);
      await trx.commit().execute();
      return outcomes;
    } catch (err) {
      await trx.rollback().execute().catch(() => {});
      throw err;
    }
  }

  /** Each write in its own savepoint: a failing one is rolled back alone (and rejected), the others go on. */
  private async grouped(trx: Kysely<Tables>, batch: Queued[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    for (const item of batch) {
      await sql`savepoint grouped`.execute(trx);
      try {
        const value = await item.work(trx);
        await sql`release savepoint grouped`.execute(trx);
        outcomes.push({ ok: true, value });
      } catch (err) {
        try {
          await sql`rollback to savepoint grouped`.execute(trx);
          await sql`release savepoint grouped`.execute(trx);
        } catch {
          // The savepoint is gone with the whole transaction (SQLite gave it up on a full disk): the batch fails
          // with this write's error, the one that says why.
          throw err;
        }
        outcomes.push({ ok: false, err });
      }
    }
    return outcomes;
  }
}
