import type { Logger } from 'pino';

/**
 * Which database failures are outages rather than faults of svc (SPEC §12 "Outages"): the database cannot be reached
 * (`unavailable`, 503) or has no room left (`storage_full`, 507). Every other error is not classified here and stays
 * what it was (a constraint, a syntax error: `internal` if nothing else claims it). Both drivers' errors are known:
 * node-postgres (socket errors, its own messages, SQLSTATE codes) and better-sqlite3 (SQLITE_* result codes).
 */
export type DatabaseErrorKind = 'unavailable' | 'storage_full';

export const DATABASE_ERROR_KINDS: readonly DatabaseErrorKind[] = ['unavailable', 'storage_full'];

/**
 * Retry-After of the answers, in seconds. A database that is restarting or failing over is usually back within
 * seconds; a full disk needs someone to free space.
 */
export const RETRY_AFTER_SECONDS: Record<DatabaseErrorKind, number> = { unavailable: 5, storage_full: 30 };

// The socket failed or never opened: refused, reset, cut, unreachable, the host name gone from DNS.
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// node-postgres and pg-pool raise these as plain Errors, with no code: a connection that ended, a connect or pool
// checkout that timed out (connectionTimeoutMillis), a client that a cut connection left unusable (the rollback after
// a cut fails with it, and that error is the one a transaction throws), a pool closed by shutdown.
const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'timeout expired',
  'is not queryable',
  'Cannot use a pool after calling end on the pool',
];

/** SQLSTATE classes and codes (PostgreSQL appendix A). */
function pgState(state: string): DatabaseErrorKind | null {
  if (state === '53100') return 'storage_full'; // disk_full
  if (state.startsWith('08')) return 'unavailable'; // connection exception
  if (state.startsWith('53')) return 'unavailable'; // insufficient resources: out of memory, too many connections
  if (state === '57P01' || state === '57P02' || state === '57P03') return 'unavailable'; // admin / crash shutdown, cannot connect now
  if (state === '25006') return 'unavailable'; // read-only transaction: a standby, mid-failover
  if (state === '58030') return 'unavailable'; // io_error
  return null;
}

function sqliteCode(code: string): DatabaseErrorKind | null {
  if (code === 'SQLITE_FULL') return 'storage_full';
  // I/O failed, the file cannot be opened, or another process holds the lock past busy_timeout: none is svc's bug,
  // and each passes.
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_BUSY')) return 'unavailable';
  if (code.startsWith('SQLITE_LOCKED') || code === 'SQLITE_PROTOCOL' || code.startsWith('SQLITE_READONLY')) return 'unavailable';
  return null;
}

function classifyOne(err: object): DatabaseErrorKind | null {
  const { code, message } = err as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  // Whatever the code, the kernel's own words mean a full disk (PostgreSQL's "could not extend file …: No space
  // left on device" is 53100, but a write of its own files can report it under another code).
  if (/no space left on device/i.test(text)) return 'storage_full';
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) return sqliteCode(code);
    if (SOCKET_CODES.has(code)) return 'unavailable';
    if (code === 'ENOSPC') return 'storage_full';
    // A SQLSTATE: five characters, digits and upper-case letters.
    if (/^[0-9A-Z]{5}$/.test(code)) return pgState(code);
  }
  return PG_MESSAGES.some((m) => text.includes(m)) ? 'unavailable' : null;
}

/**
 * The outage an error stands for, or null. Follows `cause` (pg-pool wraps a connect timeout) and an AggregateError's
 * `errors` (Node dials every address of a host name and reports each failure).
 */
export function classifyDatabaseError(err: unknown): DatabaseErrorKind | null {
  const seen = new Set<object>();
  const visit = (e: unknown): DatabaseErrorKind | null => {
    if (typeof e !== 'object' || e === null || seen.has(e) || seen.size > 8) return null;
    seen.add(e);
    const own = classifyOne(e);
    if (own === 'storage_full') return own;
    const { cause, errors } = e as { cause?: unknown; errors?: unknown };
    const inner = [cause, ...(Array.isArray(errors) ? errors : [])].map(visit).find((k) => k !== null) ?? null;
    return inner === 'storage_full' ? inner : (own ?? inner);
  };
  return visit(err);
}

/** The longest pause between two tries of a background loop: short, so work resumes soon after the database is back. */
const MAX_DELAY_MS = 2_000;
const FIRST_DELAY_MS = 250;

/**
 * A background loop's view of a database outage (the delivery worker's claims and writes): how long to wait before
 * the next try, doubling up to two seconds, and one log line when it begins and one when it ends, instead of one
 * per failed try.
 */
export class OutageBackoff {
  private failures = 0;
  private kind: DatabaseErrorKind | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly what: string,
  ) {}

  /** During an outage, until the next success. */
  get active(): boolean {
    return this.kind !== null;
  }

  /** After a failure: the pause before the next try, or null when the error is no outage (the caller reports it). */
  failed(err: unknown): number | null {
    const kind = classifyDatabaseError(err);
    if (kind === null) return null;
    if (this.kind === null) this.logger.warn({ err, kind }, `${this.what}: the database is ${kind === 'storage_full' ? 'full' : 'unavailable'}; trying again`);
    this.kind = kind;
    this.failures += 1;
    return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (this.failures - 1));
  }

  succeeded(): void {
    if (this.kind !== null) this.logger.info({ failures: this.failures }, `${this.what}: the database is back`);
    this.kind = null;
    this.failures = 0;
  }
}
