/**
 * Thrown inside a write transaction when something it read before its inserts turned out stale on the inserts' own
 * snapshot (the targets a process keeps: webhooks/targets-cache.ts). The transaction rolls back and
 * `Database.write` runs the work again from its start, at most RUN_AGAIN_MAX times in all.
 */
export class RunAgain extends Error {
  override name = 'RunAgain';
}

/**
 * Thrown by a write running outside a transaction (Database.writeStatement) before it does what needs one: a second
 * statement that writes, or a lock. Nothing is written yet; the write runs again inside a transaction.
 */
export class NeedsTransaction extends Error {
  override name = 'NeedsTransaction';
}

/**
 * How many times one write runs at most: a guard. What throws RunAgain reads afresh on the next run, unchecked (the
 * targets' cache does so for a second after a failed check), so a write runs twice at most in practice.
 */
export const RUN_AGAIN_MAX = 5;

/** `work` in transactions until one is not stale (RunAgain), RUN_AGAIN_MAX at most; the last RunAgain is thrown. */
export async function runningAgain<T>(transaction: () => Promise<T>): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await transaction();
    } catch (err) {
      if (!(err instanceof RunAgain) || run >= RUN_AGAIN_MAX) throw err;
    }
  }
}
