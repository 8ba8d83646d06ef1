import { performance } from 'node:perf_hooks';
import pg from 'pg';

/**
 * What makes a PostgreSQL outage end in an answer (503 `unavailable`, SPEC §12) instead of a hang or a crash. Every
 * connection svc opens — the pools', the LISTEN ones', the stall probe's — takes these settings:
 * - opening a connection, and waiting for a free one in a pool, give up after `connectTimeoutMs` (pg's default is to
 *   wait for ever: a server that accepts and never answers held every request);
 * - TCP keep-alive: a server or network that vanished without closing the connection is found within about
 *   KEEPALIVE_IDLE_MS + 10 s (Node sends a probe a second, ten of them), where Linux's defaults take over two hours.
 */
const KEEPALIVE_IDLE_MS = 5_000;

export interface OutageSettings {
  connectionTimeoutMillis: number;
  keepAlive: true;
  keepAliveInitialDelayMillis: number;
}

export const outageSettings = (connectTimeoutMs: number): OutageSettings => ({
  connectionTimeoutMillis: connectTimeoutMs,
  keepAlive: true,
  keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
});

const ignore = (): void => {};

/**
 * pg emits 'error' on a client whose connection breaks. The pool listens only while a client is idle in it: a
 * connection cut while a client is checked out (inside a transaction, between two statements) had no listener, and
 * Node's rule for an unheard 'error' ended the process. Every client now has one for its whole life; the failure
 * itself reaches the statements (they reject), and a client that broke is dropped by the pool when released.
 */
export function surviveBrokenConnections(pool: pg.Pool): void {
  pool.on('error', ignore);
  pool.on('connect', (client) => void client.on('error', ignore));
}

/**
 * A statement waiting on a server that no longer answers, on a connection nobody closed: a hung or stopped server,
 * a network path that stopped carrying bytes while both kernels still answer keep-alive probes. Neither pg nor TCP
 * ends it, and its request would wait past SVC_REQUEST_TIMEOUT_MS. When a pool client has been checked out longer
 * than `suspectMs`, a fresh connection asks the server `select 1`; if that gets no answer within `suspectMs` the
 * server is taken as gone, and the connection of every client checked out since before the probe is cut: its
 * statement fails ("Connection terminated unexpectedly", an outage, 503). A slow statement on a server that answers
 * the probe is left alone (an index build may take minutes), and the server is not asked again for `suspectMs`.
 */
export function watchForStalls(pools: readonly pg.Pool[], url: string, suspectMs: number): { close(): void } {
  const busy = new Map<pg.PoolClient, number>();
  for (const pool of pools) {
    pool.on('acquire', (client) => void busy.set(client, performance.now()));
    pool.on('release', (_err, client) => void busy.delete(client));
    pool.on('remove', (client) => void busy.delete(client));
  }
  let probing = false;
  let quietUntil = 0;
  const check = async (): Promise<void> => {
    const now = performance.now();
    if (probing || now < quietUntil) return;
    const suspects = [...busy].filter(([, since]) => now - since >= suspectMs).map(([client]) => client);
    if (suspects.length === 0) return;
    probing = true;
    try {
      await probe(url, suspectMs);
      quietUntil = performance.now() + suspectMs;
    } catch {
      for (const client of suspects) if (busy.has(client)) cut(client);
    } finally {
      probing = false;
    }
  };
  const timer = setInterval(() => void check(), Math.max(50, Math.floor(suspectMs / 2)));
  timer.unref();
  return { close: () => clearInterval(timer) };
}

/** The socket under a pg client (pg-pool ends a client that overran its connect timeout the same way). */
function cut(client: pg.PoolClient): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/** `select 1` on a connection of its own, within `ms` from the dial to the answer. */
async function probe(url: string, ms: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, ...outageSettings(ms) });
  client.on('error', ignore);
  let timer: NodeJS.Timeout | undefined;
  let answered = false;
  try {
    await Promise.race([
      client.connect().then(() => client.query('select 1')),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the server did not answer the probe')), ms))),
    ]);
    answered = true;
  } finally {
    clearTimeout(timer);
    // A server that did not answer would not answer a goodbye either: its socket is dropped, not ended.
    if (answered) void client.end().catch(ignore);
    else cut(client as unknown as pg.PoolClient);
  }
}
