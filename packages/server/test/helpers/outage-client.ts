import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, expect } from 'vitest';
import { startHttpsReceiver } from './https-receiver.js';

/**
 * The outside of a running svc during an outage: admin set-up over HTTP, and writers that keep creating records and
 * keep every answer (or the lack of one) for the test to judge. Plain fetch over loopback, as a client would.
 */

export const ADMIN = { email: 'outage-admin@example.com', password: 'correct horse battery staple' };

/** A process's settings on `port`, with ADMIN as its first admin, before the test's own. */
export function serveEnv(port: number, databaseUrl: string): Record<string, string> {
  return {
    SVC_DATABASE_URL: databaseUrl,
    SVC_SECRET_KEY: randomBytes(32).toString('hex'),
    SVC_HOST: '127.0.0.1',
    SVC_PORT: String(port),
    SVC_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SVC_ADMIN_EMAIL: ADMIN.email,
    SVC_ADMIN_PASSWORD: ADMIN.password,
    SVC_LOG_LEVEL: 'warn',
  };
}

export interface Answer {
  /** performance.now() when the request was sent, and when its answer (or failure) was complete. */
  sentAt: number;
  doneAt: number;
  /** HTTP status, or null when the connection failed or was dropped (never acceptable). */
  status: number | null;
  failure?: string;
  code?: string;
  retryAfter?: string | null;
  requestIdHeader?: string | null;
  requestIdBody?: string;
  contentType?: string | null;
  /** The record id of a 201. */
  id?: string;
}

async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function ok<T>(res: Promise<Response>, what: string): Promise<T> {
  const r = await res;
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

/** With SVC_ADMIN_* set: a session, a collection `items` and a records token; a target when a receiver URL is given. */
export async function setUp(base: string, receiverUrl?: string): Promise<{ token: string; admin: Record<string, string> }> {
  const login = await call(base, 'POST', '/admin/v1/session', {}, ADMIN);
  const { csrfToken } = (await login.json()) as { csrfToken: string };
  const cookie = String(login.headers.get('set-cookie')).split(';')[0]!;
  const admin = { cookie, 'x-svc-csrf': csrfToken };
  await ok(call(base, 'POST', '/admin/v1/collections', admin, { name: 'items', fields: [{ name: 'n', type: 'integer', required: true }, { name: 'blob', type: 'text', required: false }] }), 'collection');
  const { token } = await ok<{ token: string }>(call(base, 'POST', '/admin/v1/tokens', admin, { name: 'outage', scopes: ['records:read', 'records:write', 'events:read'], collections: null }), 'token');
  if (receiverUrl) await ok(call(base, 'POST', '/admin/v1/webhooks', admin, { name: 'outage', url: receiverUrl, topics: ['record.created'] }), 'target');
  return { token, admin };
}

/**
 * A receiver for a test's target that answers 200 after `delayMs` (attempts are in flight when a fault lands) and
 * keeps the record ids of what it answered 200 for; `state.down` makes it reset connections instead. `env` trusts it
 * and makes deliveries quick to retry and to rescue (3 s leases), so the test need not wait long.
 */
export async function startCountingReceiver(dir: string, delayMs = 10) {
  const delivered = new Set<string>();
  const state = { down: false };
  const receiver = await startHttpsReceiver({
    handler: (req, res, body) => {
      if (state.down) return void req.socket.destroy();
      setTimeout(() => {
        delivered.add((JSON.parse(body) as { recordId: string }).recordId);
        res.writeHead(200).end('ok');
      }, delayMs);
    },
  });
  const caFile = join(dir, 'receiver-ca.pem');
  writeFileSync(caFile, receiver.ca);
  const env = {
    SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
    SVC_WEBHOOK_CA_FILE: caFile,
    SVC_WEBHOOK_LEASE_SECONDS: '3',
    SVC_WEBHOOK_TIMEOUT_MS: '2000',
    SVC_WEBHOOK_RETRY_SCHEDULE: '0s,200ms,500ms,1s,1s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s',
    SVC_WEBHOOK_POLL_MS: '500',
  };
  return { receiver, url: `${receiver.url}/hook`, delivered, state, env };
}

/** One create, kept as an Answer whatever happens. */
export async function createRecord(base: string, token: string, data: Record<string, unknown>): Promise<Answer> {
  const sentAt = performance.now();
  try {
    const res = await call(base, 'POST', '/api/v1/collections/items/records', { authorization: `Bearer ${token}` }, { data });
    const text = await res.text();
    const answer: Answer = {
      sentAt,
      doneAt: performance.now(),
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      requestIdHeader: res.headers.get('x-request-id'),
      contentType: res.headers.get('content-type'),
    };
    const body = text ? (JSON.parse(text) as { id?: string; code?: string; requestId?: string }) : {};
    if (res.status === 201) answer.id = body.id;
    else Object.assign(answer, { code: body.code, requestIdBody: body.requestId });
    return answer;
  } catch (err) {
    return { sentAt, doneAt: performance.now(), status: null, failure: String((err as Error).cause ?? err) };
  }
}

/**
 * `count` writers creating records one after another until stopped; after an answer that is not 201 each pauses
 * `pauseMs` (a client honouring Retry-After would wait longer; the test wants to see the return quickly).
 */
export function startWriters(base: string, token: string, count: number, data: () => Record<string, unknown>, pauseMs = 100) {
  const answers: Answer[] = [];
  let running = true;
  const loops = Array.from({ length: count }, async () => {
    while (running) {
      const answer = await createRecord(base, token, data());
      answers.push(answer);
      if (answer.status !== 201) await new Promise((r) => setTimeout(r, pauseMs));
    }
  });
  return {
    answers,
    async stop(): Promise<void> {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The first 201 sent after `since`: how long after `since` its answer came (ms), or null. */
export function servedAgainAfter(answers: readonly Answer[], since: number): number | null {
  const first = answers.filter((a) => a.status === 201 && a.sentAt >= since).sort((a, b) => a.doneAt - b.doneAt)[0];
  return first ? first.doneAt - since : null;
}

export async function status(base: string, path: string): Promise<{ status: number; retryAfter: string | null }> {
  const res = await fetch(`${base}${path}`);
  await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after') };
}

/** A counter's value on /metrics (0 when the series is absent). */
export async function metric(base: string, series: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Every answer that is not a success is this outage's problem: problem+json, the code, Retry-After, one request id. */
export function expectOutageAnswers(answers: readonly Answer[], status: number, code: string, retryAfter: string): void {
  for (const a of answers.filter((x) => x.status === status)) {
    expect(a.code).toBe(code);
    expect(a.retryAfter).toBe(retryAfter);
    expect(a.contentType).toMatch(/^application\/problem\+json/);
    expect(a.requestIdHeader).toBeTruthy();
    expect(a.requestIdBody).toBe(a.requestIdHeader);
  }
}

/** Steps to undo after the file's tests, last first (processes before the database they use). */
export function undoAfterAll(): (step: () => Promise<void> | void) => void {
  const steps: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const step of steps.reverse()) await step();
  });
  return (step) => void steps.push(step);
}

/**
 * A long-poll reader of the feed (`GET /api/v1/events?wait=`), resuming from its last cursor after any answer, as a
 * consumer that rides out an outage does: the record ids it has read, and every status it got.
 */
export function startLongPoller(base: string, token: string) {
  const recordIds = new Set<string>();
  const statuses: number[] = [];
  let running = true;
  let after = 'now';
  const loop = (async () => {
    while (running) {
      try {
        const res = await fetch(`${base}/api/v1/events?after=${encodeURIComponent(after)}&wait=2&collection=items`, { headers: { authorization: `Bearer ${token}` } });
        statuses.push(res.status);
        if (res.status === 200) {
          const page = (await res.json()) as { items: Array<{ recordId: string }>; nextCursor: string };
          for (const e of page.items) recordIds.add(e.recordId);
          after = page.nextCursor;
        } else {
          await res.text();
          await new Promise((r) => setTimeout(r, 200));
        }
      } catch {
        statuses.push(0);
      }
    }
  })();
  return {
    recordIds,
    statuses,
    async stop(): Promise<void> {
      running = false;
      await loop;
    },
  };
}
