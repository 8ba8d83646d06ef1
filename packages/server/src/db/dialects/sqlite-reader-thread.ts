/**
 * A reader thread's body (see sqlite-readers.ts): one read-only connection to the database file, statements prepared
 * once per text, one request at a time. It exists so that a slow records query runs beside the event loop instead of
 * on it, and can be abandoned by ending the thread (better-sqlite3 has no interrupt). In `write` mode the connection
 * may write: the one heavy write at a time (an index build, a forced delete) that sqlite-writer-thread.ts runs while
 * the main connection waits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { registerQueryFunctions } from './sqlite-functions.js';
import { statementCache } from './sqlite-statements.js';

export interface ReaderRequest {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}

export type ReaderReply =
  | { ready: true }
  | { id: number; rows: unknown[] }
  | { id: number; changes: number }
  | { id: number; error: { message: string; code?: string } };

export type ThreadMode = 'read' | 'write';
export interface ThreadData {
  path: string;
  mode: ThreadMode;
  /** A writer's durability: the main connection's (SVC_SQLITE_SYNCHRONOUS). */
  synchronous?: 'FULL' | 'NORMAL';
}

const STATEMENT_CACHE_SIZE = 200;

function serve({ path, mode, synchronous }: ThreadData): void {
  const port = parentPort!;
  // A reader is read-only and query_only: nothing it runs can write, whatever statement text reaches it. WAL lets it
  // read a committed snapshot beside the writer; busy_timeout covers the moment a checkpoint or a recovery holds the file.
  const native = new SQLite(path, { readonly: mode === 'read', fileMustExist: true });
  native.pragma('busy_timeout = 5000');
  if (mode === 'read') native.pragma('query_only = ON');
  // A writer's transaction keeps the main connection's rules: cascades need the foreign keys on.
  else {
    native.pragma('foreign_keys = ON');
    native.pragma(`synchronous = ${synchronous ?? 'FULL'}`);
  }
  registerQueryFunctions(native);
  const prepare = statementCache(native, STATEMENT_CACHE_SIZE);
  // Structured cloning turns a Buffer into a plain Uint8Array; better-sqlite3 binds only Buffers as blobs.
  const bindable = (v: unknown) => (v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v);
  port.on('message', (req: ReaderRequest) => {
    let reply: ReaderReply;
    try {
      // As on the main connection: a failure SQLite rolled back by itself (SQLITE_FULL) leaves no transaction to roll back.
      const stmt = prepare(req.sql === 'rollback' && !native.inTransaction ? 'select 0 where 0' : req.sql);
      const params = req.parameters.map(bindable);
      reply = stmt.reader ? { id: req.id, rows: stmt.all(params) } : { id: req.id, changes: stmt.run(params).changes };
    } catch (err) {
      const e = err as { message?: unknown; code?: unknown };
      reply = { id: req.id, error: { message: String(e.message ?? err), ...(typeof e.code === 'string' ? { code: e.code } : {}) } };
    }
    port.postMessage(reply);
  });
  port.on('close', () => native.close());
  port.postMessage({ ready: true } satisfies ReaderReply);
}

serve(workerData as ThreadData);
