import type { Worker } from 'node:worker_threads';
import { CompiledQuery, type DatabaseConnection, type Driver, type Kysely, type QueryResult } from 'kysely';
import type { Tables } from '../tables.js';
import type { ReaderReply } from './sqlite-reader-thread.js';
import { sqliteKysely, startThread, withBuffers } from './sqlite-readers.js';

/**
 * A heavy write on SQLite (an index built over a large collection, a forced delete of one) on a connection of its own
 * in a worker thread, so that the event loop goes on while SQLite reads and writes a gigabyte. The main connection is
 * held for the whole time (Kysely's lock on it: its statements and transactions wait their turn without blocking), so
 * no write of the main connection meets the thread's write lock, which it would wait for in busy_timeout, holding the
 * loop. Reader threads and the health checks (which read the native connection directly) go on meanwhile, and
 * records queries go straight to a reader thread (sqlite-readers.ts readerKysely).
 *
 * `work` must use only the Kysely it is given: the main connection is held until it returns.
 */
export async function onWriterThread<T>(
  path: string,
  synchronous: 'FULL' | 'NORMAL',
  main: Kysely<Tables>,
  mainHeld: { held: boolean },
  work: (db: Kysely<Tables>) => Promise<T>,
): Promise<T> {
  // Started before the main connection is held: a thread's start (80-140 ms) keeps no write waiting.
  const thread = new WriterThread(startThread(path, 'write', synchronous));
  const db = thread.kysely();
  try {
    await thread.ready;
    return await main.connection().execute(async () => {
      mainHeld.held = true;
      try {
        return await work(db);
      } finally {
        mainHeld.held = false;
      }
    });
  } finally {
    await db.destroy();
  }
}

/** One thread, one statement at a time, in the order they are sent (Kysely runs a transaction's statements in turn). */
class WriterThread {
  readonly ready: Promise<void>;
  private readonly waiting = new Map<number, { resolve(r: QueryResult<unknown>): void; reject(e: Error): void }>();
  private nextId = 1;
  private lost: Error | null = null;

  constructor(private readonly worker: Worker) {
    let started: () => void = () => {};
    let failed: (e: Error) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failed = reject;
    });
    worker.on('message', (reply: ReaderReply) => {
      if ('ready' in reply) return started();
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      if ('error' in reply) w.reject(Object.assign(new Error(reply.error.message), reply.error.code ? { code: reply.error.code } : {}));
      else if ('rows' in reply) w.resolve({ rows: reply.rows.map(withBuffers) });
      else w.resolve({ rows: [], numAffectedRows: BigInt(reply.changes) });
    });
    const lose = (err: Error) => {
      this.lost ??= err;
      failed(err);
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    };
    worker.on('error', lose);
    worker.on('exit', (code) => lose(new Error(`the SQLite writer thread exited (${code})`)));
  }

  run(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, sql, parameters });
    });
  }

  kysely(): Kysely<Tables> {
    const connection: DatabaseConnection = {
      executeQuery: <R>(q: CompiledQuery) => this.run(q.sql, q.parameters) as Promise<QueryResult<R>>,
      // eslint-disable-next-line require-yield
      streamQuery: async function* () {
        throw new Error('the SQLite writer thread does not stream');
      },
    };
    const raw = (text: string) => connection.executeQuery(CompiledQuery.raw(text)).then(() => {});
    const driver: Driver = {
      init: async () => {},
      acquireConnection: async () => connection,
      // As on the main connection: the write lock first, so a transaction never fails half-way for want of it.
      beginTransaction: () => raw('begin immediate'),
      commitTransaction: () => raw('commit'),
      rollbackTransaction: () => raw('rollback'),
      releaseConnection: async () => {},
      destroy: async () => {
        this.worker.removeAllListeners('exit');
        this.worker.on('error', () => {});
        await this.worker.terminate();
      },
    };
    return sqliteKysely(driver);
  }
}
