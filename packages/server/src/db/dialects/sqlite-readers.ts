import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { Tables } from '../tables.js';
import { OverBudgetError, type MainBudget } from './sqlite-functions.js';
import type { ReaderReply, ReaderRequest, ThreadData, ThreadMode } from './sqlite-reader-thread.js';

/** What a records query that outlived SVC_QUERY_TIMEOUT_MS rejects with (caps.isQueryTimeout knows the code). */
export class ReaderTimeoutError extends Error {
  readonly code = 'SVC_QUERY_TIMEOUT';
  constructor(ms: number) {
    super(`the query ran longer than ${ms} ms and was abandoned`);
    this.name = 'ReaderTimeoutError';
  }
}

interface Pending {
  request: ReaderRequest;
  resolve(result: QueryResult<unknown>): void;
  reject(err: Error): void;
  /** Runs first while the request waits for a reader, then again from when a reader takes it. */
  timer: NodeJS.Timeout;
  reader: Reader | null;
}

interface Reader {
  worker: Worker;
  /** Its connection is open (a thread takes tens of milliseconds to start: that is not the query's time). */
  ready: boolean;
  busy: Pending | null;
}

/**
 * The thread's script: the bundle's (dist/sqlite-reader-thread.js, built by build.mjs, beside dist/svc.mjs or one
 * folder up from a chunk in dist/chunks/) or tsc's (dist/db/dialects/, beside this module). When svc runs from its
 * TypeScript sources (tests, tsx), a worker does not inherit the loader (Node 20 ignores `--import` in a worker's
 * execArgv), so a two-line script registers tsx first, then loads the source.
 */
export function startThread(path: string, mode: ThreadMode = 'read', synchronous?: 'FULL' | 'NORMAL'): Worker {
  const workerData: ThreadData = { path, mode, ...(synchronous ? { synchronous } : {}) };
  const js = ['./sqlite-reader-thread.js', '../sqlite-reader-thread.js'].map((p) => new URL(p, import.meta.url)).find((u) => existsSync(fileURLToPath(u)));
  if (js) return new Worker(js, { workerData });
  // tsx's ES module API (its CommonJS one cannot register the ESM hooks from an eval'd script).
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const entry = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import.default;
  const tsx = new URL(entry, pathToFileURL(manifest)).href;
  const source = new URL('./sqlite-reader-thread.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(boot, { eval: true, workerData });
}

/**
 * Threads that run SQLite reads beside the event loop, each with its own read-only connection (WAL lets them read
 * committed data while the main connection writes). A statement that runs longer than `timeoutMs` is answered with
 * ReaderTimeoutError at once and its thread is ended: better-sqlite3 cannot interrupt a statement, so the thread is
 * terminated, which takes effect at its next call into JavaScript (svc_check, every 64 rows: QueryDialect.rowCheck),
 * and replaced when work waits. The time a request waits for a free reader counts against the same `timeoutMs`.
 * Threads being ended count against `size`, so runaway queries cannot multiply threads.
 */
export class ReaderPool {
  private readonly readers: Reader[] = [];
  private readonly queue: Pending[] = [];
  private ending = 0;
  private nextId = 1;
  private closed = false;
  private readonly exits = new Set<Promise<unknown>>();

  constructor(
    private readonly path: string,
    private readonly size: number,
    private readonly timeoutMs: number,
  ) {}

  run(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    if (this.closed) return Promise.reject(new Error('the reader pool is closed'));
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        request: { id: this.nextId++, sql, parameters },
        resolve,
        reject,
        reader: null,
        timer: setTimeout(() => this.expire(pending), this.timeoutMs),
      };
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /** Threads alive and being ended (for tests and metrics). */
  get threads(): { alive: number; ending: number } {
    return { alive: this.readers.length, ending: this.ending };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) this.settle(p, new Error('the reader pool is closed'));
    for (const r of this.readers.splice(0)) {
      if (r.busy) this.settle(r.busy, new Error('the reader pool is closed'));
      this.end(r);
    }
    await Promise.all(this.exits);
  }

  private dispatch(): void {
    if (this.closed) return;
    // Threads start when work waits for one (a test's app or a CLI command that never queries starts none) and are kept.
    const free = () => this.readers.filter((r) => r.busy === null).length;
    while (this.queue.length > free() && this.readers.length + this.ending < this.size) this.spawn();
    while (this.queue.length > 0) {
      const reader = this.readers.find((r) => r.ready && r.busy === null);
      if (!reader) return;
      const pending = this.queue.shift()!;
      pending.reader = reader;
      reader.busy = pending;
      // The deadline set when the query came stays: waiting for a reader and running on it share SVC_QUERY_TIMEOUT_MS
      // (restarted here, a query queued behind a runaway one was answered after nearly twice the timeout).
      reader.worker.postMessage(pending.request);
    }
  }

  private spawn(): Reader {
    const worker = startThread(this.path);
    const reader: Reader = { worker, ready: false, busy: null };
    worker.on('message', (reply: ReaderReply) => {
      if ('ready' in reply) {
        reader.ready = true;
        this.dispatch();
        return;
      }
      const pending = reader.busy;
      if (!pending || pending.request.id !== reply.id) return;
      reader.busy = null;
      if ('error' in reply) this.settle(pending, Object.assign(new Error(reply.error.message), reply.error.code ? { code: reply.error.code } : {}));
      else if ('rows' in reply) this.settle(pending, null, { rows: reply.rows.map(withBuffers) });
      else this.settle(pending, null, { rows: [], numAffectedRows: BigInt(reply.changes) });
      this.dispatch();
    });
    // A thread that fails (the file cannot be opened) or exits on its own takes only its own request with it.
    const lost = (err: Error) => {
      const i = this.readers.indexOf(reader);
      if (i < 0) return;
      this.readers.splice(i, 1);
      if (reader.busy) this.settle(reader.busy, err);
      reader.busy = null;
      // It could not even open the database: the requests waiting now get that error instead of a thread each.
      if (!reader.ready) for (const p of this.queue.splice(0)) this.settle(p, err);
      this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`a SQLite reader thread exited (${code})`)));
    this.readers.push(reader);
    return reader;
  }

  private expire(pending: Pending): void {
    const queued = this.queue.indexOf(pending);
    if (queued >= 0) this.queue.splice(queued, 1);
    const reader = pending.reader;
    if (reader && reader.busy === pending) {
      this.readers.splice(this.readers.indexOf(reader), 1);
      reader.busy = null;
      this.end(reader);
    }
    this.settle(pending, new ReaderTimeoutError(this.timeoutMs));
    this.dispatch();
  }

  private end(reader: Reader): void {
    this.ending++;
    reader.worker.removeAllListeners('exit');
    reader.worker.removeAllListeners('error');
    reader.worker.on('error', () => {});
    const exit = reader.worker.terminate().finally(() => {
      this.ending--;
      this.exits.delete(exit);
      this.dispatch();
    });
    this.exits.add(exit);
  }

  private settle(pending: Pending, err: Error | null, result?: QueryResult<unknown>): void {
    clearTimeout(pending.timer);
    if (err) pending.reject(err);
    else pending.resolve(result!);
  }
}

/** Blobs cross the thread boundary as plain Uint8Arrays; the rest of svc reads them as Buffers, as on the main connection. */
export function withBuffers(row: unknown): unknown {
  const r = row as Record<string, unknown>;
  for (const k in r) {
    const v = r[k];
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) r[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  }
  return r;
}

/**
 * A Kysely instance for records queries: reads only, no transactions. Each statement runs first on the main
 * connection (`main`), where the row check gives it up once it outgrows its budget (OverBudgetError), and then on the
 * pool, where it may run until the query timeout; straight on the pool while heavy work holds the main connection,
 * and always with `offMain` (Database.offMain).
 */
export function readerKysely(pool: ReaderPool, main: Kysely<Tables>, mainHeld: { held: boolean }, budget: MainBudget, offMain = false): Kysely<Tables> {
  const connection: DatabaseConnection = {
    executeQuery: async <R>(q: CompiledQuery) => {
      // Heavy work holds the main connection (sqlite-writer-thread.ts): a query would wait for it there, outside its
      // timeout; a reader answers it now. So does one asked for in a turn in which another outgrew its budget there.
      if (offMain || mainHeld.held || budget.overran) return (await pool.run(q.sql, q.parameters)) as QueryResult<R>;
      try {
        return await main.executeQuery<R>(q);
      } catch (err) {
        if (!(err instanceof OverBudgetError)) throw err;
        // Until the next turn, records statements are refused on the main connection before they run (MainBudget
        // overran): each try spends its whole budget before it gives up, and the tries of requests that came together
        // ran back to back. Ten requests for a busy target's stats (three statements each) held /healthz 530-640 ms
        // (a database of 2,000,000 attempts); twenty over 60,000 attempts held the loop 578-671 ms, now 59-145 ms.
        if (!budget.overran) {
          budget.overran = true;
          setImmediate(() => (budget.overran = false));
        }
        return (await pool.run(q.sql, q.parameters)) as QueryResult<R>;
      }
    },
    // eslint-disable-next-line require-yield
    streamQuery: async function* () {
      throw new Error('the SQLite reader pool does not stream');
    },
  };
  const readOnly = async () => {
    throw new Error('the SQLite reader pool runs single statements, never transactions');
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: readOnly,
    commitTransaction: readOnly,
    rollbackTransaction: readOnly,
    releaseConnection: async () => {},
    destroy: () => pool.close(),
  };
  return sqliteKysely(driver);
}

/** A Kysely that speaks SQLite through a driver of svc's own (a connection in another thread). */
export function sqliteKysely(driver: Driver): Kysely<Tables> {
  return new Kysely<Tables>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
}
