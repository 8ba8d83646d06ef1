import { afterEach, describe, expect, it } from 'vitest';
import { createApiToken } from '../../src/auth/api-tokens.js';
import { createCollection } from '../../src/records/collections.js';
import { newId } from '../../src/lib/ids.js';
import { DIALECTS } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * SPEC §12: no records query keeps the process from answering. The review's case: a read-only token lists with 50 `~`
 * terms over 200 records of 50 KB; on SQLite that ran on the event loop (17 s, /healthz waiting 16.9 s behind it).
 */
const TERMS = Array.from({ length: 50 }, (_, i) => `body ~ "needle-${i}-absent"`).join(' || ');

async function seedBigRecords(svc: TestServer, count: number): Promise<void> {
  await createCollection(svc.ctx, 'docs', [{ name: 'body', type: 'text', required: false }]);
  const now = Date.now();
  const body = 'Lorem ipsum DOLOR sit amet ÀÉÎ '.repeat(1600); // ~50 KB, not ASCII-only, so case folding works for it
  for (let start = 0; start < count; start += 50) {
    const rows = Array.from({ length: Math.min(50, count - start) }, (_, k) => ({
      id: newId('rec', now + start + k), collection: 'docs', version: 1, created_at: now, updated_at: now, data: JSON.stringify({ body }),
    }));
    await svc.ctx.database.db.insertInto('records').values(rows).execute();
  }
}

/**
 * Times GET /healthz, one after another, until `busy` settles; and how busy this process's event loop (which serves
 * svc: the server runs in the test process) was meanwhile. The latencies say what a client sees; on a machine shared
 * with other work they also carry its scheduling delays, which the event loop's utilization does not: a loop held by
 * a statement is busy the whole time (utilization near 1), a loop that waits for a reader thread is mostly idle.
 */
async function healthzWhile(baseUrl: string, busy: Promise<unknown>): Promise<{ latencies: number[]; utilization: number }> {
  let done = false;
  void busy.finally(() => (done = true));
  const latencies: number[] = [];
  const before = performance.eventLoopUtilization();
  while (!done) {
    const t = performance.now();
    const res = await fetch(`${baseUrl}/healthz`);
    expect(res.status).toBe(200);
    latencies.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  const utilization = performance.eventLoopUtilization(before).utilization;
  return { latencies: latencies.sort((a, b) => a - b), utilization };
}

/** SPEC §12's bar is 250 ms for every answer; the median must hold it on any machine, the slowest one on a quiet one. */
function expectAnswering(h: { latencies: number[]; utilization: number }): void {
  expect(h.latencies.length).toBeGreaterThanOrEqual(2);
  expect(h.utilization).toBeLessThan(0.5);
  expect(h.latencies[Math.floor(h.latencies.length / 2)]!).toBeLessThan(250);
  expect(h.latencies.at(-1)!).toBeLessThan(Number(process.env.SVC_TEST_HEALTHZ_MAX_MS ?? 1_000));
}

describe.each(DIALECTS)('records queries that run long (%s)', (dialect) => {
  let svc: TestServer | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it('a 50-term ~ list over 200 records of 50 KB leaves /healthz answering within 250 ms', async () => {
    // Whether it ends within the query timeout depends on the machine (10 s on a loaded 2-core one): either answer is
    // right, as long as the process kept answering meanwhile.
    svc = await startTestServer({ dialect, worker: false, env: { SVC_QUERY_TIMEOUT_MS: '4000' } });
    await seedBigRecords(svc, 200);
    const { token } = await createApiToken(svc.ctx, { name: 'reader', scopes: ['records:read'], collections: null });
    const listing = fetch(`${svc.baseUrl}/api/v1/collections/docs/records?count=true&filter=${encodeURIComponent(TERMS)}`, { headers: { authorization: `Bearer ${token}` } });
    const health = await healthzWhile(svc.baseUrl, listing);
    const res = await listing;
    const body = (await res.json()) as { items: unknown[]; totalCount: number; code?: string };
    if (res.status === 200) expect(body).toMatchObject({ items: [], totalCount: 0 });
    else expect([res.status, body.code]).toEqual([503, 'query_timeout']);
    expectAnswering(health);
  }, 120_000);

  it('a list running past SVC_QUERY_TIMEOUT_MS answers 503 query_timeout at the deadline, and the next query works', async () => {
    svc = await startTestServer({ dialect, worker: false, env: { SVC_QUERY_TIMEOUT_MS: '1000' } });
    await seedBigRecords(svc, 400);
    const { token } = await createApiToken(svc.ctx, { name: 'reader', scopes: ['records:read', 'records:write'], collections: null });
    const headers = { authorization: `Bearer ${token}` };
    const started = performance.now();
    const listing = fetch(`${svc.baseUrl}/api/v1/collections/docs/records?count=true&filter=${encodeURIComponent(TERMS)}`, { headers });
    const health = await healthzWhile(svc.baseUrl, listing);
    const res = await listing;
    const took = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(await res.json()).toMatchObject({ code: 'query_timeout', status: 503 });
    expectAnswering(health);
    // Answered at the deadline, not when the statement would have ended (seconds later).
    expect(took).toBeLessThan(1000 + 2_000);
    // The same process answers the next queries: a write, then a filtered read that sees it (a reader thread's
    // snapshot starts after the commit it follows).
    await createCollection(svc.ctx, 'notes', [{ name: 'body', type: 'text', required: false }]);
    const created = await fetch(`${svc.baseUrl}/api/v1/collections/notes/records`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ data: { body: 'short Needle-X' } }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    const found = await fetch(`${svc.baseUrl}/api/v1/collections/notes/records?filter=${encodeURIComponent('body ~ "needle-x"')}`, { headers });
    expect(found.status).toBe(200);
    expect(((await found.json()) as { items: Array<{ id: string }> }).items.map((r) => r.id)).toEqual([id]);
  }, 120_000);

  // SQLite gives a records query 20 ms on the main connection, then runs it again on a reader thread: the second run
  // must be whole (an abandoned first run must not leave a short answer). PostgreSQL has one run.
  it.runIf(dialect === 'sqlite')('a list that outgrows the main connection is run again whole: every match counted and listed', async () => {
    svc = await startTestServer({ dialect, worker: false });
    await seedBigRecords(svc, 120);
    const { token } = await createApiToken(svc.ctx, { name: 'reader', scopes: ['records:read'], collections: null });
    // The last of 20 terms matches every record ("dolor", folded from DOLOR): every term of every record is judged.
    const filter = [...Array.from({ length: 19 }, (_, i) => `body ~ "needle-${i}-absent"`), 'body ~ "dolor"'].join(' || ');
    const seen = new Set<string>();
    let cursor: string | null = null;
    let total = -1;
    do {
      const res = await fetch(`${svc.baseUrl}/api/v1/collections/docs/records?count=true&limit=500&filter=${encodeURIComponent(filter)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { items: Array<{ id: string }>; totalCount: number; nextCursor: string | null };
      total = body.totalCount;
      for (const r of body.items) seen.add(r.id);
      cursor = body.nextCursor;
    } while (cursor);
    expect(total).toBe(120);
    expect(seen.size).toBe(120);
  }, 120_000);

  it('reads what was just written, through every kind of records query', async () => {
    svc = await startTestServer({ dialect, worker: false });
    await createCollection(svc.ctx, 'notes', [{ name: 'n', type: 'integer', required: false }]);
    const { token } = await createApiToken(svc.ctx, { name: 'rw', scopes: ['records:read', 'records:write'], collections: null });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    for (let n = 1; n <= 20; n++) {
      const made = await fetch(`${svc.baseUrl}/api/v1/collections/notes/records`, { method: 'POST', headers, body: JSON.stringify({ data: { n } }) });
      expect(made.status).toBe(201);
      const page = (await (await fetch(`${svc.baseUrl}/api/v1/collections/notes/records?sort=-n&limit=1&count=true&filter=${encodeURIComponent('n >= 1')}`, { headers })).json()) as { items: Array<{ data: { n: number } }>; totalCount: number };
      expect(page.totalCount).toBe(n);
      expect(page.items[0]!.data.n).toBe(n);
    }
  }, 60_000);
});
