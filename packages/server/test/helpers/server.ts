import { connect, createServer } from 'node:net';
import { openContext, startProcess, type Running } from '../../src/runtime.js';
import { loadConfig } from '../../src/config/load.js';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import type { Context } from '../../src/context.js';
import type { Resolver } from '../../src/webhooks/destination-guard.js';
import { createTestDatabase, type Dialect, type TestDatabase } from './db.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface TestServer {
  baseUrl: string;
  /** The token of the one-time setup link (null when an admin exists). */
  setupToken: string | null;
  ctx: Context;
  running: Running;
  database: TestDatabase;
  close(): Promise<void>;
}

/**
 * A real listening svc (API and, unless `worker: false`, a delivery worker), as `svc serve` runs it,
 * on a fresh database. SVC_PUBLIC_URL matches the chosen port so browser Origin checks pass.
 */
export async function startTestServer(
  opts: { dialect?: Dialect; env?: Record<string, string>; worker?: boolean; resolver?: Resolver; database?: TestDatabase } = {},
): Promise<TestServer> {
  const database = opts.database ?? (await createTestDatabase(opts.dialect ?? 'sqlite'));
  const port = await freePort();
  const config = loadConfig({
    SVC_SECRET_KEY: randomBytes(32).toString('hex'),
    SVC_LOG_LEVEL: 'warn',
    SVC_HOST: '127.0.0.1',
    SVC_PORT: String(port),
    SVC_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SVC_WEBHOOK_POLL_MS: '200',
    ...opts.env,
    SVC_DATABASE_URL: database.url,
  });
  const ctx = await openContext(config, { logger: pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? 'silent' }), resolver: opts.resolver });
  const running = await startProcess(ctx, { api: true, worker: opts.worker ?? true });
  const setupToken = running.setupLink ? new URL(running.setupLink).searchParams.get('token') : null;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    setupToken,
    ctx,
    running,
    database,
    close: async () => {
      await running.stop();
      if (!opts.database) await database.drop();
    },
  };
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
