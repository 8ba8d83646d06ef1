import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { promisify } from 'node:util';
import pg from 'pg';
import { requiredServices, SERVICES, type Service } from './helpers/required.js';

/**
 * Runs once before the suite (vitest.config.ts). With SVC_TEST_REQUIRE (set by `.ci/run`), each service it names must
 * be configured and answer, or the run stops here, naming it: its tests are never quietly skipped. With PostgreSQL
 * configured, the migrated template the test databases are copied from is built before any worker starts.
 */
export default async function setup(): Promise<void> {
  const required = requiredServices();
  const problems: string[] = [];
  for (const service of required) {
    const problem = await unavailable(service).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
    if (problem) problems.push(`${service}: ${problem}`);
  }
  if (problems.length > 0) {
    throw new Error(`SVC_TEST_REQUIRE=${process.env.SVC_TEST_REQUIRE}, but ${problems.length === 1 ? 'this is' : 'these are'} not available:\n  ${problems.join('\n  ')}`);
  }
  if (process.env.SVC_TEST_POSTGRES_URL) {
    const { migratedTemplate } = await import('./helpers/db.js');
    await migratedTemplate();
  }
}

/** Why the service cannot be used, or null when it answers. */
async function unavailable(service: Service): Promise<string | null> {
  if (service === 'chromium') {
    if (!existsSync(SERVICES.chromium)) return `${SERVICES.chromium} is not installed`;
    await promisify(execFile)(SERVICES.chromium, ['--version'], { timeout: 30_000 });
    return null;
  }
  const url = process.env[SERVICES[service]];
  if (!url) return `${SERVICES[service]} is not set`;
  const { hostname, port } = new URL(url);
  const at = `${hostname}:${port}`;
  switch (service) {
    case 'postgres': {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
      try {
        await client.connect();
        await client.query('select 1');
        return null;
      } finally {
        await client.end().catch(() => {});
      }
    }
    case 'redis':
      return (await hello(hostname, Number(port || 6379), 'PING\r\n')).startsWith('+PONG') ? null : `no PONG from ${at}`;
    case 'nats': {
      // The server speaks first: INFO {…}, which says whether JetStream is on (the broker tests need it).
      const info = await hello(hostname, Number(port || 4222), null);
      if (!info.startsWith('INFO ')) return `no INFO from ${at}`;
      return /"jetstream"\s*:\s*true/.test(info) ? null : `${at} runs without JetStream (start nats-server with -js)`;
    }
    case 'amqp':
      // AMQP 0-9-1's protocol header; the broker answers with a method frame (type 1), Connection.Start.
      return (await hello(hostname, Number(port || 5672), Buffer.from('AMQP\x00\x00\x09\x01', 'latin1')))[0] === '\x01' ? null : `no Connection.Start from ${at}`;
  }
}

/** Connects, sends `greeting` (if any) and resolves with the first bytes the server sends back. */
function hello(host: string, port: number, greeting: string | Buffer | null): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(5_000, () => socket.destroy(new Error(`${host}:${port} did not answer within 5 s`)));
    socket.once('connect', () => {
      if (greeting) socket.write(greeting);
    });
    socket.once('data', (data) => {
      resolve(data.toString('latin1'));
      socket.destroy();
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`${host}:${port} closed the connection without a word`)));
  });
}
