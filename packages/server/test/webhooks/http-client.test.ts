import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkDestination, parseCidrList, type ResolvedAddress, type Resolver } from '../../src/webhooks/destination-guard.js';
import { createDeliveryClient, parseRetryAfter, snippetOf, type AttemptOutcome, type DeliveryClientOptions } from '../../src/webhooks/http-client.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';

const loopback = parseCidrList('127.0.0.0/8');
const request = { headers: { 'content-type': 'application/json', 'svc-delivery': 'del_test' }, body: '{"hello":"world"}' };

// Names point at loopback receivers; "localhost" matches the receivers' certificates.
const names: Record<string, ResolvedAddress[]> = { localhost: [{ address: '127.0.0.1', family: 4 }] };
const resolver: Resolver = async (hostname) => {
  const found = names[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

const clients: Array<{ close(): Promise<void> }> = [];
function client(options: Partial<DeliveryClientOptions> = {}) {
  const created = createDeliveryClient({ resolver, allow: loopback, ca: [receiver.ca], connectionsPerOrigin: 4, timeoutMs: 3_000, ...options });
  clients.push(created);
  return created;
}

let receiver: HttpsReceiver;
const localUrl = (r: HttpsReceiver, pathname = '/hook'): string => `https://localhost:${r.port}${pathname}`;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  receiver.setHandler((_req, res) => res.writeHead(200).end('ok'));
  receiver.requests.length = 0;
});
afterAll(async () => {
  await receiver.close();
});

function expectResponse(outcome: AttemptOutcome): Extract<AttemptOutcome, { kind: 'response' }> {
  if (outcome.kind !== 'response') throw new Error(`expected a response, got ${JSON.stringify(outcome)}`);
  return outcome;
}
function expectFailure(outcome: AttemptOutcome, code: string): void {
  expect(outcome).toMatchObject({ kind: 'failure', code, message: expect.any(String) });
}

describe('answers', () => {
  it('POSTs the body and headers and reports a 200', async () => {
    const outcome = expectResponse(await client().send({ url: localUrl(receiver), ...request }));
    expect(outcome).toMatchObject({ statusCode: 200, snippet: 'ok', retryAfterSeconds: null });
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]).toMatchObject({ method: 'POST', path: '/hook', body: request.body });
    expect(receiver.requests[0]?.headers).toMatchObject({ 'svc-delivery': 'del_test', host: `localhost:${receiver.port}` });
  });

  it('reports a 500 with its snippet', async () => {
    receiver.setHandler((_req, res) => res.writeHead(500).end('boom: database down'));
    expect(expectResponse(await client().send({ url: localUrl(receiver), ...request }))).toMatchObject({ statusCode: 500, snippet: 'boom: database down' });
  });

  it('never follows a redirect', async () => {
    const second = await startHttpsReceiver();
    try {
      receiver.setHandler((_req, res) => res.writeHead(307, { location: localUrl(second, '/elsewhere') }).end());
      const c = client({ ca: [receiver.ca, second.ca] });
      const outcome = expectResponse(await c.send({ url: localUrl(receiver), ...request }));
      expect(outcome.statusCode).toBe(307);
      // Closing waits for every request the client has under way: a redirect followed behind the answer's back
      // would have reached the second receiver by then.
      await c.close();
      expect(second.requests).toHaveLength(0);
      expect(second.connections).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('reads Retry-After on a 429', async () => {
    receiver.setHandler((_req, res) => res.writeHead(429, { 'retry-after': '7' }).end('slow down'));
    expect(expectResponse(await client().send({ url: localUrl(receiver), ...request }))).toMatchObject({ statusCode: 429, retryAfterSeconds: 7 });
  });

  it('reuses connections: 20 sends to one origin use at most 2', async () => {
    const before = receiver.connections;
    const c = client();
    for (let i = 0; i < 20; i++) expectResponse(await c.send({ url: localUrl(receiver), ...request }));
    expect(receiver.requests).toHaveLength(20);
    expect(receiver.connections - before).toBeLessThanOrEqual(2);
  });

  it('ignores proxy environment variables', async () => {
    const saved = { HTTPS_PROXY: process.env.HTTPS_PROXY, https_proxy: process.env.https_proxy, NO_PROXY: process.env.NO_PROXY };
    process.env.HTTPS_PROXY = process.env.https_proxy = 'http://127.0.0.1:9';
    delete process.env.NO_PROXY;
    try {
      expect(expectResponse(await client().send({ url: localUrl(receiver), ...request })).statusCode).toBe(200);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});

describe('time and size bounds', () => {
  it('times out a receiver that never answers', async () => {
    receiver.setHandler(() => {});
    const started = Date.now();
    const outcome = await client({ timeoutMs: 500 }).send({ url: localUrl(receiver), ...request });
    expectFailure(outcome, 'timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('reads only the head of a 100 MB body', async () => {
    const total = 100 * 1024 * 1024;
    let written = 0;
    let stopped!: () => void;
    const writing = new Promise<void>((resolve) => (stopped = resolve));
    receiver.setHandler(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(total) });
      const chunk = Buffer.alloc(64 * 1024, 'é'.repeat(32 * 1024));
      let open = true;
      res.on('close', () => (open = false));
      while (open && written < total) {
        written += chunk.length;
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
      }
      res.end();
      stopped();
    });
    const started = Date.now();
    const outcome = expectResponse(await client().send({ url: localUrl(receiver), ...request }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(Buffer.byteLength(outcome.snippet)).toBeLessThanOrEqual(1024);
    expect(outcome.snippet).toBe('é'.repeat(512));
    // The receiver writes until the client closes the connection (or all 100 MB went): what it wrote by then. A client
    // that kept the connection open without reading would hold the receiver at its write: that fails here too.
    const kept = await Promise.race([writing.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), 10_000).unref())]);
    expect(kept, 'the client left the connection open').toBe(false);
    expect(written).toBeLessThan(total / 4);
  });

  it('does not let a drip-fed body hold the attempt', async () => {
    receiver.setHandler((_req, res) => {
      res.writeHead(200);
      const drip = setInterval(() => res.write('x'), 100);
      res.on('close', () => clearInterval(drip));
    });
    const started = Date.now();
    const outcome = expectResponse(await client({ timeoutMs: 1_000 }).send({ url: localUrl(receiver), ...request }));
    expect(outcome.statusCode).toBe(200);
    expect(outcome.snippet).toMatch(/^x+$/);
    expect(Date.now() - started).toBeLessThan(1_000 + 2_000);
  });

  it('times out a look-up that never answers, and still closes', async () => {
    const c = client({ timeoutMs: 500, resolver: () => new Promise(() => {}) });
    const started = Date.now();
    expectFailure(await c.send({ url: localUrl(receiver), ...request }), 'timeout');
    expect(Date.now() - started).toBeLessThan(1_500);
    await c.close();
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('times out a send that waits for a free connection', async () => {
    receiver.setHandler(() => {});
    const c = client({ timeoutMs: 500, connectionsPerOrigin: 1 });
    const started = Date.now();
    const outcomes = await Promise.all([c.send({ url: localUrl(receiver), ...request }), c.send({ url: localUrl(receiver), ...request })]);
    for (const outcome of outcomes) expectFailure(outcome, 'timeout');
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    // Aborted once the request is at the receiver, which never answers: the send ends soon after the abort.
    let abortedAt = 0;
    receiver.setHandler(() => {
      abortedAt = Date.now();
      controller.abort();
    });
    const outcome = await client().send({ url: localUrl(receiver), ...request }, controller.signal);
    expect(outcome.kind).toBe('failure');
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(1_000);
  });
});

describe('failures', () => {
  it('connection refused → connection_failed', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = server.address() as net.AddressInfo;
        server.close(() => resolve(free));
      });
    });
    expectFailure(await client().send({ url: `https://localhost:${port}/`, ...request }), 'connection_failed');
  });

  it('a certificate for another name → tls_failed', async () => {
    const wrong = await startHttpsReceiver({ altNames: ['wrong.example'] });
    try {
      expectFailure(await client({ ca: [wrong.ca] }).send({ url: localUrl(wrong), ...request }), 'tls_failed');
      expect(wrong.requests).toHaveLength(0);
    } finally {
      await wrong.close();
    }
  });

  it('a self-signed certificate that is not trusted → tls_failed', async () => {
    const outcome = await client({ ca: undefined }).send({ url: localUrl(receiver), ...request });
    expectFailure(outcome, 'tls_failed');
    expect(receiver.requests).toHaveLength(0);
  });

  it('a receiver that speaks plain HTTP → tls_failed', async () => {
    const plain = net.createServer((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')).listen(0, '127.0.0.1');
    await new Promise((resolve) => plain.once('listening', resolve));
    try {
      const { port } = plain.address() as net.AddressInfo;
      expectFailure(await client().send({ url: `https://localhost:${port}/`, ...request }), 'tls_failed');
    } finally {
      plain.close();
    }
  });

  it('a name that turns private between save and delivery → destination_refused, never dialled', async () => {
    const rebinding = await startHttpsReceiver({ host: '127.0.0.2', altNames: ['rebind.example'] });
    const answers: ResolvedAddress[][] = [[{ address: '93.184.216.34', family: 4 }], [{ address: '127.0.0.2', family: 4 }]];
    const rebindingResolver: Resolver = async () => answers.shift() ?? [{ address: '127.0.0.2', family: 4 }];
    const allow = parseCidrList('127.0.0.1/32');
    try {
      const url = `https://rebind.example:${rebinding.port}/hook`;
      await expect(checkDestination(url, { resolver: rebindingResolver, allow })).resolves.toHaveLength(1);
      const outcome = await client({ resolver: rebindingResolver, allow, ca: [rebinding.ca] }).send({ url, ...request });
      expectFailure(outcome, 'destination_refused');
      expect(outcome.kind === 'failure' && outcome.message).toContain('127.0.0.2');
      expect(rebinding.connections).toBe(0);
      // The same receiver is reachable once allowed, so "no connection" above was the guard's doing.
      const allowed = await client({ resolver: async () => [{ address: '127.0.0.2', family: 4 }], ca: [rebinding.ca] }).send({ url, ...request });
      expect(expectResponse(allowed).statusCode).toBe(200);
    } finally {
      await rebinding.close();
    }
  });

  it('checks IP-literal URLs too', async () => {
    const before = receiver.connections;
    const outcome = await client({ allow: parseCidrList('10.0.0.0/8') }).send({ url: `https://127.0.0.1:${receiver.port}/`, ...request });
    expectFailure(outcome, 'destination_refused');
    expect(receiver.connections).toBe(before);
  });

  it('reaches an allowed IP literal, verifying the certificate against the IP', async () => {
    expect(expectResponse(await client().send({ url: `${receiver.url}/hook`, ...request })).statusCode).toBe(200);
  });

  it('refuses a URL that is not https', async () => {
    expectFailure(await client().send({ url: `http://localhost:${receiver.port}/`, ...request }), 'destination_refused');
  });

  it('a name that does not resolve → dns_failed', async () => {
    const before = receiver.connections;
    expectFailure(await client().send({ url: `https://nowhere.example:${receiver.port}/`, ...request }), 'dns_failed');
    expect(receiver.connections).toBe(before);
  });
});

describe('trust', () => {
  it('keeps trusting NODE_EXTRA_CA_CERTS when extra CAs are configured', async () => {
    const other = await startHttpsReceiver({ altNames: ['other.example'] });
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-extra-ca-'));
    try {
      writeFileSync(path.join(dir, 'extra.pem'), receiver.ca);
      const clientModule = fileURLToPath(new URL('../../src/webhooks/http-client.ts', import.meta.url));
      const guardModule = fileURLToPath(new URL('../../src/webhooks/destination-guard.ts', import.meta.url));
      const script = `
        const { createDeliveryClient } = await import(${JSON.stringify(clientModule)});
        const { parseCidrList } = await import(${JSON.stringify(guardModule)});
        const c = createDeliveryClient({ resolver: async () => [{ address: '127.0.0.1', family: 4 }], allow: parseCidrList('127.0.0.0/8'),
          ca: [${JSON.stringify(other.ca)}], connectionsPerOrigin: 1, timeoutMs: 3000 });
        const outcome = await c.send({ url: 'https://localhost:${receiver.port}/', headers: {}, body: '' });
        await c.close();
        console.log(JSON.stringify(outcome));`;
      // Asynchronously: the receiver lives in this process and must keep answering.
      const child = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(dir, 'extra.pem') },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(child.stderr).not.toMatch(/Error/);
      expect(JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}')).toMatchObject({ kind: 'response', statusCode: 200 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await other.close();
    }
  });
});

describe('parseRetryAfter and snippetOf', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each([
    ['7', 7],
    [' 120 ', 120],
    ['0', 0],
    ['Wed, 01 Jan 2025 00:00:30 GMT', 30],
    ['Tue, 31 Dec 2024 23:00:00 GMT', 0],
    ['-5', null],
    ['7.5', null],
    ['soon', null],
    ['', null],
    [undefined, null],
  ] as const)('%s → %s', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it('cuts at 1024 bytes without splitting a character', () => {
    const text = `${'a'.repeat(1022)}€tail`; // € is 3 bytes: it would straddle the limit
    expect(snippetOf(Buffer.from(text))).toBe('a'.repeat(1022));
    expect(snippetOf(Buffer.from('short'))).toBe('short');
    const invalid = snippetOf(Buffer.alloc(1100, 0xff));
    expect(Buffer.byteLength(invalid)).toBeLessThanOrEqual(1024);
  });
});
