import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyDatabaseError } from '../../src/db/database-errors.js';
import { AppError } from '../../src/errors.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { freePort } from '../helpers/server.js';

/**
 * The classifier against the errors the drivers really raise, each provoked for real: sockets that refuse, reset,
 * close or never answer (pg's own messages and pg-pool's timeouts), a PostgreSQL backend terminated by the server,
 * SQLite's full database, unopenable file and held lock, the kernel's ENOSPC. Only SQLSTATEs a test cannot provoke on
 * a shared server (a full disk, a server starting up) are pg's DatabaseError made by hand, as its parser makes it.
 */
const thrown = (work: () => unknown): unknown => {
  try {
    work();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
};

const caught = async (work: () => unknown): Promise<unknown> => {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
};

/** A TCP server on loopback that treats every connection as `handle` says. */
async function fakeServer(handle: (socket: net.Socket) => void): Promise<{ url: string; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    handle(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

const connectClient = (url: string, extra: pg.ClientConfig = {}) => {
  const client = new pg.Client({ connectionString: url, ...extra });
  client.on('error', () => {});
  return client.connect();
};

describe('classifyDatabaseError: node-postgres, real sockets', () => {
  const servers: Array<{ close(): void }> = [];
  afterAll(() => servers.forEach((s) => s.close()));

  it('a refused connection is unavailable', async () => {
    const port = await freePort();
    const err = await caught(() => connectClient(`postgres://postgres@127.0.0.1:${port}/test`));
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
    expect(classifyDatabaseError(err)).toBe('unavailable');
  });

  it('a server that closes the connection: "Connection terminated unexpectedly", unavailable', async () => {
    const s = await fakeServer((socket) => socket.end());
    servers.push(s);
    const err = await caught(() => connectClient(s.url));
    expect((err as Error).message).toBe('Connection terminated unexpectedly');
    expect(classifyDatabaseError(err)).toBe('unavailable');
  });

  it('a server that resets the connection: ECONNRESET, unavailable', async () => {
    const s = await fakeServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    servers.push(s);
    const err = await caught(() => connectClient(s.url));
    expect((err as { code?: string }).code).toBe('ECONNRESET');
    expect(classifyDatabaseError(err)).toBe('unavailable');
  });

  it("a server that never answers: pg-pool's connect timeout and its checkout timeout, both unavailable", async () => {
    const s = await fakeServer(() => {});
    servers.push(s);
    const pool = new pg.Pool({ connectionString: s.url, max: 1, connectionTimeoutMillis: 100 });
    pool.on('error', () => {});
    // The first checkout dials (and times out); the second waits for a free client (and times out).
    const [dialled, queued] = await Promise.all([caught(() => pool.connect()), caught(() => pool.connect())]);
    expect((dialled as Error).message).toBe('Connection terminated due to connection timeout');
    expect((queued as Error).message).toBe('timeout exceeded when trying to connect');
    expect(classifyDatabaseError(dialled)).toBe('unavailable');
    expect(classifyDatabaseError(queued)).toBe('unavailable');
    await pool.end();
  });

  it("a client's own connect timeout is unavailable", async () => {
    const s = await fakeServer(() => {});
    servers.push(s);
    const err = await caught(() => connectClient(s.url, { connectionTimeoutMillis: 100 }));
    expect(classifyDatabaseError(err)).toBe('unavailable');
  });
});

describe('classifyDatabaseError: PostgreSQL itself', () => {
  it.skipIf(!POSTGRES_URL)('a backend the server terminates (57P01), and the client it leaves unusable', async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    client.on('error', () => {});
    await client.connect();
    const terminated = await caught(() => client.query('select pg_terminate_backend(pg_backend_pid())'));
    expect((terminated as { code?: string }).code).toBe('57P01');
    expect(classifyDatabaseError(terminated)).toBe('unavailable');
    const after = await caught(() => client.query('select 1'));
    expect(classifyDatabaseError(after)).toBe('unavailable');
  });

  it.skipIf(!POSTGRES_URL)("the server's refusals that are not outages stay unclassified", async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query('create temporary table t (v int primary key)');
      await client.query('insert into t values (1)');
      const unique = await caught(() => client.query('insert into t values (1)'));
      const syntax = await caught(() => client.query('selec 1'));
      await client.query('set statement_timeout = 10');
      const cancelled = await caught(() => client.query('select pg_sleep(1)'));
      expect([unique, syntax, cancelled].map((e) => (e as { code?: string }).code)).toEqual(['23505', '42601', '57014']);
      // 57014 is a records query over SVC_QUERY_TIMEOUT_MS: query_timeout, not an outage.
      expect([unique, syntax, cancelled].map(classifyDatabaseError)).toEqual([null, null, null]);
    } finally {
      await client.end();
    }
  });

  it('SQLSTATEs of a full disk and of a server that cannot serve, as the protocol parser builds them', () => {
    const made = (state: string, message: string) => Object.assign(new pg.DatabaseError(message, 0, 'error'), { code: state });
    expect(classifyDatabaseError(made('53100', 'could not extend file "base/16384/2619": No space left on device'))).toBe('storage_full');
    expect(classifyDatabaseError(made('58030', 'could not write to file "pg_wal/xlogtemp.42": No space left on device'))).toBe('storage_full');
    expect(classifyDatabaseError(made('57P03', 'the database system is starting up'))).toBe('unavailable');
    expect(classifyDatabaseError(made('57P02', 'terminating connection because of crash of another server process'))).toBe('unavailable');
    expect(classifyDatabaseError(made('08006', 'connection failure'))).toBe('unavailable');
    expect(classifyDatabaseError(made('53300', 'sorry, too many clients already'))).toBe('unavailable');
    expect(classifyDatabaseError(made('25006', 'cannot execute INSERT in a read-only transaction'))).toBe('unavailable');
  });
});

describe('classifyDatabaseError: better-sqlite3 and the kernel', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-dberr-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a database that cannot grow (SQLITE_FULL) is storage_full', () => {
    const db = new SQLite(join(dir, 'full.db'));
    db.exec('create table t (v text)');
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true })) + 1}`);
    const err = thrown(() => {
      for (let i = 0; i < 100; i++) db.prepare('insert into t values (?)').run('x'.repeat(4000));
    });
    db.close();
    expect((err as { code?: string }).code).toBe('SQLITE_FULL');
    expect(classifyDatabaseError(err)).toBe('storage_full');
  });

  it('a file that cannot be opened, and a lock held past busy_timeout, are unavailable', () => {
    // A folder where the database file should be: SQLite cannot open it.
    const cantOpen = thrown(() => new SQLite(dir).exec('select 1'));
    expect((cantOpen as { code?: string }).code).toBe('SQLITE_CANTOPEN');
    expect(classifyDatabaseError(cantOpen)).toBe('unavailable');

    const path = join(dir, 'busy.db');
    const holder = new SQLite(path);
    holder.exec('create table t (v int)');
    holder.exec('begin immediate');
    const other = new SQLite(path);
    other.pragma('busy_timeout = 0');
    const busy = thrown(() => other.exec('begin immediate'));
    holder.exec('rollback');
    holder.close();
    other.close();
    expect((busy as { code?: string }).code).toBe('SQLITE_BUSY');
    expect(classifyDatabaseError(busy)).toBe('unavailable');
  });

  it("SQLite's refusals that are not outages stay unclassified", () => {
    const db = new SQLite(':memory:');
    db.exec('create table t (v int primary key)');
    db.exec('insert into t values (1)');
    const errors = [() => db.exec('insert into t values (1)'), () => db.exec('selec 1')].map(thrown);
    db.close();
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_ERROR']);
    expect(errors.map(classifyDatabaseError)).toEqual([null, null]);
  });

  it("the kernel's ENOSPC (a write to /dev/full) is storage_full", () => {
    const err = thrown(() => writeFileSync('/dev/full', 'x'));
    expect((err as { code?: string }).code).toBe('ENOSPC');
    expect(classifyDatabaseError(err)).toBe('storage_full');
  });

  it('errors of svc itself, and things that are not errors, are not outages', () => {
    for (const e of [new Error('boom'), new AppError('conflict', 'taken'), new TypeError('x is undefined'), null, undefined, 'ECONNREFUSED', 42]) {
      expect(classifyDatabaseError(e)).toBeNull();
    }
  });

  it('follows causes and aggregated errors (a host name dialled at several addresses)', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' });
    expect(classifyDatabaseError(new AggregateError([refused], ''))).toBe('unavailable');
    expect(classifyDatabaseError(new Error('wrapped', { cause: refused }))).toBe('unavailable');
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(classifyDatabaseError(loop)).toBeNull();
  });
});
