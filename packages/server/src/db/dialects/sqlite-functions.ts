import type SQLite from 'better-sqlite3';
import { instantKey, simpleLowercase } from '../../lib/query-functions.js';

/** What svc_check throws on the main connection once a records query has used its budget (see MainBudget). */
export class OverBudgetError extends Error {
  constructor() {
    super('the records query outgrew its budget on the main thread');
    this.name = 'OverBudgetError';
  }
}

/**
 * The main connection's budget for the statement it is running: svc_check throws OverBudgetError once it has passed,
 * which makes better-sqlite3 abandon the statement. Set for each statement that carries the row check (records
 * queries) as it is prepared, so it never applies to a write or to another statement.
 */
export interface MainBudget {
  deadline: number;
  /**
   * A records statement outgrew its budget on the main connection in this turn of the event loop (readerKysely): the
   * next ones are refused there at once, before they run, and go to a reader thread. Statements queue for the main
   * connection and each one's turn comes in a microtask of the one before, so a flag read when a statement was asked
   * for (not when it is prepared) let every queued one spend its budget too.
   */
  overran: boolean;
}

/**
 * The user functions svc's SQL calls on SQLite, registered on every connection that runs it: the main one (with its
 * budget) and each reader thread's (sqlite-reader-thread.ts). Deterministic, so indexes may be built on them.
 * SQLite's own lower() folds ASCII only.
 */
export function registerQueryFunctions(native: SQLite.Database, budget?: MainBudget): void {
  // A `~` term lowers a whole text for every row: on the main connection it checks the budget too, as 64 rows of
  // 50-term filters over 50 KB texts are seconds of work between two row checks.
  native.function('svc_lower', { deterministic: true }, (t: unknown) => {
    if (budget && performance.now() > budget.deadline) throw new OverBudgetError();
    return typeof t === 'string' ? simpleLowercase(t) : t;
  });
  native.function('svc_instant', { deterministic: true }, (t: unknown) => (typeof t === 'string' ? instantKey(t) : null));
  // Called now and then by records queries (QueryDialect.rowCheck): a reader thread being terminated stops there (V8
  // ends a thread only when it runs JavaScript), and the main connection gives up a statement past its budget.
  native.function('svc_check', { deterministic: false }, () => {
    if (budget && performance.now() > budget.deadline) throw new OverBudgetError();
    return 1;
  });
}
