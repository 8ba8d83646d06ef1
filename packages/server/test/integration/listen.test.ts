import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyDelivery } from 'svc-sdk/verify';
import { createApiToken } from '../../src/auth/api-tokens.js';
import { createAdmin } from '../../src/auth/setup.js';
import { deliveryIdFor } from '../../src/cli/listen.js';
import { DIALECTS } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** A TCP proxy in front of svc whose connections the test can cut at will. */
async function startProxy(port: number) {
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

interface Received {
  delivery: string;
  eventId: string;
  topic: string;
}

/** The receiver a developer would write: verifies every request with svc-sdk/verify. */
async function startReceiver(secret: () => string) {
  const received: Received[] = [];
  const rejected: string[] = [];
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const envelope = await verifyDelivery({ secret: secret(), headers: req.headers as Record<string, string>, rawBody: Buffer.concat(chunks) });
        expect(req.headers['user-agent']).toBe('svc-webhooks/1');
        received.push({ delivery: String(req.headers['svc-delivery']), eventId: (envelope.payload as { eventId: string }).eventId, topic: envelope.topic });
        res.writeHead(200).end();
      } catch (err) {
        rejected.push((err as Error).message);
        res.writeHead(401).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, received, rejected, close: () => new Promise((r) => server.close(r)) };
}

describe.each(DIALECTS)('svc listen (%s)', (dialect) => {
  let svc: TestServer;
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('forwards every event once, signed like a delivery, across dropped connections; stops on Ctrl-C', async () => {
    svc = await startTestServer({ dialect, worker: false });
    cleanups.push(() => svc.close());
    await createAdmin(svc.ctx, 'a@example.com', 'correct horse battery staple');
    const login = await fetch(`${svc.baseUrl}/admin/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'a@example.com', password: 'correct horse battery staple' }) });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
    const made = await fetch(`${svc.baseUrl}/admin/v1/collections`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-svc-csrf': csrf },
      body: JSON.stringify({ name: 'issues', fields: [{ name: 'title', type: 'text', required: false }] }),
    });
    expect(made.status).toBe(201);
    const { token } = await createApiToken(svc.ctx, { name: 'listen', scopes: ['records:read', 'records:write', 'events:read'], collections: null });
    const proxy = await startProxy(Number(new URL(svc.baseUrl).port));
    cleanups.push(() => proxy.close());
    let secret = '';
    const receiver = await startReceiver(() => secret);
    cleanups.push(() => receiver.close());
    const written: string[] = [];
    const write = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${svc.baseUrl}/api/v1/collections/issues/records`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ data: { title: `t${written.length}` } }),
        });
        expect(res.status).toBe(201);
        written.push(((await res.json()) as { id: string }).id);
      }
    };
    await write(2); // before listen starts: not forwarded (it starts at the present)

    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', MAIN, 'listen', '--url', proxy.url, '--token', token, '--forward-to', receiver.url], { env: clean });
    cleanups.push(() => child.kill('SIGKILL'));
    let stdout = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stdout += d));
    secret = (await waitFor(() => /signing secret: (whsec_\S+)/.exec(stdout)?.[1], 'the secret', 20_000))!;
    const connections = () => stdout.match(/connected: following/g)?.length ?? 0;
    await waitFor(() => connections() === 1, 'listen to connect', 20_000);

    await write(5);
    await waitFor(() => receiver.received.length === 5, 'five forwards', 20_000);
    proxy.cut();
    await write(5); // while listen is disconnected
    await waitFor(() => receiver.received.length === 10, 'ten forwards after reconnecting', 20_000);
    expect(connections()).toBe(2);
    const writing = write(10);
    await waitFor(() => receiver.received.length >= 13, 'some of the next ten', 20_000);
    proxy.cut(); // in the middle of a run of writes
    await writing;
    // The second cut may land after every event already reached listen: it still reconnects (after the server's
    // retry), and only then is a last write the proof that nothing was repeated: a repeat would arrive before it.
    await waitFor(() => connections() === 3, 'listen to reconnect after the second cut', 20_000);
    await write(1);
    await waitFor(() => receiver.received.length >= 21, 'the forward after the last reconnect', 20_000);

    expect(receiver.rejected).toEqual([]);
    expect(receiver.received).toHaveLength(21);
    const feed = (await (await fetch(`${svc.baseUrl}/api/v1/events?limit=100`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: Array<{ id: string }> };
    expect(receiver.received.map((r) => r.eventId)).toEqual(feed.items.slice(2).map((e) => e.id));
    for (const r of receiver.received) {
      expect(r.delivery).toBe(deliveryIdFor(r.eventId));
      expect(r.delivery).toMatch(/^del_[0-9A-HJKMNP-TV-Z]{26}$/);
    }
    expect(stdout.match(/-> 200/g)).toHaveLength(21);
    expect(connections()).toBe(3);

    const exit = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exit).toBe(0);
    expect(stdout).toContain('svc listen: stopped');
  }, 90_000);

  it('refuses what reconnecting cannot fix: a bad token, with status 1', async () => {
    svc = await startTestServer({ dialect, worker: false });
    cleanups.push(() => svc.close());
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'listen', '--url', svc.baseUrl, '--token', 'svc_pat_nope', '--forward-to', 'http://127.0.0.1:9/x'], { env: clean });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
    expect(code).toBe(1);
    expect(stderr).toContain('401');
  }, 30_000);
});
