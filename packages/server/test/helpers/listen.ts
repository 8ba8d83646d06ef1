import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { verifyDelivery } from 'svc-sdk/verify';
import { createApiToken } from '../../src/auth/api-tokens.js';
import { createAdmin } from '../../src/auth/setup.js';
import type { Dialect } from './db.js';
import { startTestServer, type TestServer } from './server.js';
import { waitFor } from './wait.js';

/** Helpers of the `svc listen` tests: a real svc with a collection and a token, a verifying receiver, the command itself. */

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** A TCP proxy in front of svc whose connections the test can cut at will. */
export async function startProxy(port: number) {
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

export interface Received {
  delivery: string;
  eventId: string;
  topic: string;
  /** What the receiver answered. */
  status: number;
  bytes: number;
}

/**
 * The receiver a developer would write: verifies every request with svc-sdk/verify. `answer` picks the status of a
 * verified request (default 200); a bad signature is 401.
 */
export async function startReceiver(secret: () => string, answer: (r: Omit<Received, 'status'>) => number = () => 200) {
  const received: Received[] = [];
  const rejected: string[] = [];
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const rawBody = Buffer.concat(chunks);
        const envelope = await verifyDelivery({ secret: secret(), headers: req.headers as Record<string, string>, rawBody });
        if (req.headers['user-agent'] !== 'svc-webhooks/1') throw new Error(`user-agent ${req.headers['user-agent']}`);
        const got = { delivery: String(req.headers['svc-delivery']), eventId: (envelope.payload as { eventId: string }).eventId, topic: envelope.topic, bytes: rawBody.length };
        const status = answer(got);
        received.push({ ...got, status });
        res.writeHead(status).end();
      } catch (err) {
        rejected.push((err as Error).message);
        res.writeHead(401).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, received, rejected, close: () => new Promise((r) => server.close(r)) };
}

/** svc with an admin, a collection `issues` (one optional text field `title`) and a token that may write and read events. */
export async function startFeedServer(dialect: Dialect, env: Record<string, string> = {}) {
  const svc: TestServer = await startTestServer({ dialect, worker: false, env });
  await createAdmin(svc.ctx, 'a@example.com', 'correct horse battery staple');
  const login = await fetch(`${svc.baseUrl}/admin/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'a@example.com', password: 'correct horse battery staple' }) });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
  const made = await fetch(`${svc.baseUrl}/admin/v1/collections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, 'x-svc-csrf': csrf },
    body: JSON.stringify({ name: 'issues', fields: [{ name: 'title', type: 'text', required: false }] }),
  });
  if (made.status !== 201) throw new Error(`collection: ${made.status}`);
  const { token } = await createApiToken(svc.ctx, { name: 'listen', scopes: ['records:read', 'records:write', 'events:read'], collections: null });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${svc.baseUrl}/api/v1/${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  };
  return {
    svc,
    token,
    /** Creates a record; its id. */
    create: async (title: string) => (await call('POST', 'collections/issues/records', { data: { title } })).id,
    update: async (id: string, title: string) => void (await call('PATCH', `collections/issues/records/${id}`, { data: { title } })),
    /** Every event id in the feed, oldest first. */
    eventIds: async () => {
      const res = await fetch(`${svc.baseUrl}/api/v1/events?limit=1000`, { headers: { authorization: `Bearer ${token}` } });
      return ((await res.json()) as { items: Array<{ id: string }> }).items.map((e) => e.id);
    },
  };
}

/** The environment of a child: none of the test run's SVC_* settings. */
export const cleanEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...(Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_'))) as Record<string, string>),
  ...extra,
});

/** `svc listen <args>` from the TypeScript sources, its stdout and stderr gathered as one text. */
export function spawnListen(args: string[], env: Record<string, string> = cleanEnv()) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', MAIN, 'listen', ...args], { env });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exit = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return {
    child,
    exit,
    out: () => out,
    /** Waits for the output to match; the first group (or the whole match). */
    wait: async (pattern: RegExp, what: string, timeoutMs = 60_000) => {
      const m = await waitFor(() => pattern.exec(out), what, timeoutMs).catch((err: Error) => {
        throw new Error(`${err.message}; listen said:\n${out}`);
      });
      return m[1] ?? m[0];
    },
    /** Ctrl-C, then the exit status. */
    interrupt: async () => {
      child.kill('SIGINT');
      return exit;
    },
    kill: () => child.kill('SIGKILL'),
  };
}
