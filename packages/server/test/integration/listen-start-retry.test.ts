import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, ListenError } from '../../src/cli/listen.js';
import { waitFor } from '../helpers/wait.js';

/**
 * docs/event-feed.md: `svc listen` gives up only on what reconnecting cannot fix (400, 401, 403, 410). Its first
 * request, the head's cursor, used to make any other failure fatal: svc not yet up (connection refused) or answering
 * 503 while it starts ended listen with `svc: fetch failed`. A synthetic svc (no database) plays those answers.
 */

interface Script {
  /** What the n-th request to /api/v1/events answers (the last one again after that); the stream stays open. */
  pages: Array<{ status: number; body: unknown }>;
}

async function startFakeSvc(script: Script, port = 0) {
  const requests: string[] = [];
  let streams = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/api/v1/events/stream') {
      streams++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
      return;
    }
    requests.push(`${req.method} ${url.pathname}?${url.searchParams}`);
    const page = script.pages[Math.min(requests.length, script.pages.length) - 1]!;
    res.writeHead(page.status, { 'content-type': 'application/json' }).end(JSON.stringify(page.body));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    requests,
    streams: () => streams,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe('svc listen at start', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function run(url: string, after: string | null = null) {
    const lines: string[] = [];
    const stop = new AbortController();
    const done = listen({
      url,
      token: 'svc_pat_test',
      forwardTo: 'http://127.0.0.1:9/hook',
      collections: [],
      topics: [],
      after,
      secret: 'whsec_0123456789abcdef0123',
      print: (line) => lines.push(line),
      signal: stop.signal,
    });
    const settled = done.then(
      (cursor) => ({ cursor, error: null as Error | null }),
      (error: Error) => ({ cursor: null, error }),
    );
    cleanups.push(async () => (stop.abort(), await settled));
    return { lines, stop, settled };
  }

  it('waits for svc to come up and past a 503, then follows the stream from the head it read', async () => {
    // A port nothing listens on yet: svc is still starting.
    const probe = await startFakeSvc({ pages: [{ status: 200, body: {} }] });
    const port = probe.port;
    await probe.close();
    const { lines, settled } = run(`http://127.0.0.1:${port}`);
    await waitFor(() => lines.some((l) => /^could not reach svc \(.*ECONNREFUSED.*\); retrying in 1s$/.test(l)), 'a refused first request', 10_000);

    const svc = await startFakeSvc({
      pages: [
        { status: 503, body: { code: 'unavailable', detail: 'The database is unavailable.' } },
        { status: 200, body: { items: [], nextCursor: 'head-cursor' } },
      ],
    }, port);
    cleanups.push(() => svc.close());
    await waitFor(() => svc.streams() === 1, 'the stream to open', 20_000);
    expect(lines).toContain('svc answered 503: unavailable: The database is unavailable.; retrying in 2s');
    expect(lines.at(-1)).toBe('connected: following the event stream');
    expect(svc.requests).toEqual(['GET /api/v1/events?limit=1&after=now', 'GET /api/v1/events?limit=1&after=now']);
    const outcome = await Promise.race([settled, new Promise((r) => setTimeout(r, 0, 'running'))]);
    expect(outcome).toBe('running');
  }, 40_000);

  it('still stops at once on what waiting cannot fix: a bad token', async () => {
    const svc = await startFakeSvc({ pages: [{ status: 401, body: { code: 'unauthorized', detail: 'The bearer token is not valid.' } }] });
    cleanups.push(() => svc.close());
    const { settled } = run(`http://127.0.0.1:${svc.port}`);
    const { error } = await settled;
    expect(error).toBeInstanceOf(ListenError);
    expect(error!.message).toBe('svc answered 401: unauthorized: The bearer token is not valid.');
    expect(svc.requests).toHaveLength(1);
  });

  it('Ctrl-C while svc is unreachable ends listen at once', async () => {
    const probe = await startFakeSvc({ pages: [{ status: 200, body: {} }] });
    await probe.close();
    const { lines, stop, settled } = run(`http://127.0.0.1:${probe.port}`);
    await waitFor(() => lines.length > 0, 'the first failure', 10_000);
    const t0 = performance.now();
    stop.abort();
    const { error } = await settled;
    expect(error).not.toBeInstanceOf(ListenError);
    // The 1 s wait was cut short: the abort, not the timer, ended it.
    expect(performance.now() - t0).toBeLessThan(500);
  });
});
