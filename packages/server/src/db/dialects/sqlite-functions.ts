import type SQLite from 'better-sqlite3';
import { instantKey, simpleLowercase } from '../../lib/query-functions.js';

/**
 * The user functions svc's SQL calls on SQLite, registered on every connection that runs it: the main one and each
 * reader thread's (sqlite-reader-thread.ts). Deterministic, so indexes may be built on them. SQLite's own lower() folds
 * ASCII only.
 */
export function registerQueryFunctions(native: SQLite.Database): void {
  native.function('svc_lower', { deterministic: true }, (t: unknown) => (typeof t === 'string' ? simpleLowercase(t) : t));
  native.function('svc_instant', { deterministic: true }, (t: unknown) => (typeof t === 'string' ? instantKey(t) : null));
  // Called now and then by long statements (QueryDialect.rowCheck) only so that a thread being terminated has a
  // point at which to stop: V8 ends a thread only when it runs JavaScript.
  native.function('svc_check', { deterministic: false }, () => 1);
}
