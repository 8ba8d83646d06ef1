import { sql, type Kysely, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database } from '../../src/db/dialects/types.js';
import type { Tables } from '../../src/db/tables.js';
import { JsonBytes } from '../../src/lib/json-slices.js';
import { CHUNK_BUCKETS, OFF_MAIN_ATTEMPTS } from '../../src/webhooks/target-health.js';
import { turnCounter } from '../helpers/turn-counter.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { seedEvent, seedTarget } from '../helpers/queue-fixtures.js';
import { withinAttempts } from '../../src/http/routes/admin-webhook-health.js';
import { attemptsPerTarget } from '../../src/webhooks/attempt-stats-store.js';

/**
 * GET /admin/v1/webhooks/stats: every live target's health a page at a time, each item's `stats` exactly what
 * GET /admin/v1/webhooks/{id}/stats answers (docs/target-health.md "The overview of every target").
 */
const NOW = Date.UTC(2026, 10, 20, 10, 30);
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const publicResolver = async () => [{ address: '93.184.216.34', family: 4 as const }];

interface Attempt {
  at: number;
  ms: number;
  ok: boolean;
}

let jobs = 0;
/**
 * A target's attempts as svc stores them: a success on its delivered job's row (migration 020) or, for some, as an
 * attempt row (as before 020); a failure as an attempt row of a dead job.
 */
async function seedAttempts(db: Kysely<Tables>, webhookId: string, attempts: Attempt[]): Promise<void> {
  for (const [i, a] of attempts.entries()) {
    const id = `del_${String(++jobs).padStart(26, '0')}`;
    const onRow = a.ok && i % 3 === 0;
    await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at,
                                         success_started_at, success_duration_ms, success_status_code, success_snippet)
              values (${id}, ${webhookId}, 'evt_1', 'record.created', 'issues', 'rec_1', ${a.ok ? 'delivered' : 'dead'}, 1, 0, ${a.at}, ${a.at}, ${a.at},
                      ${a.ok && !onRow ? a.at : null}, ${a.ok && !onRow ? a.ms : null}, ${a.ok && !onRow ? 200 : null}, ${a.ok && !onRow ? '' : null})`.execute(db);
    if (!a.ok || onRow) {
      await sql`insert into delivery_attempts_rows (job_id, webhook_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet)
                values (${id}, ${webhookId}, 1, ${a.at}, ${a.ms}, ${a.ok ? 200 : 500}, ${a.ok ? null : 'http_status'}, ${a.ok ? null : 'The receiver answered 500.'}, '')`.execute(db);
    }
  }
}

/** `n` attempts spread over the last `spanMs`, durations scattered so the percentiles are not the ends. */
const spread = (n: number, spanMs: number, failEvery: number, seed: number): Attempt[] =>
  Array.from({ length: n }, (_, i) => ({ at: NOW - Math.floor(((i + 1) * spanMs) / (n + 1)), ms: (i * 7919 + seed) % 1000, ok: (i + seed) % failEvery !== 0 }));

describe.each(DIALECTS)('GET /admin/v1/webhooks/stats (%s)', (dialect) => {
  let t: TestApp;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTestApp(dialect, {}, { clock: new ManualClock(NOW), resolver: publicResolver });
    const create = async (name: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name, url: 'https://receiver.example/hook', topics: ['record.created'] } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    for (const name of ['busy', 'failing', 'quiet', 'disabled', 'deleted', 'fine']) ids[name] = await create(name);
    await seedEvent(t.ctx.database.db);
    const db = t.ctx.database.db;
    await seedAttempts(db, ids.busy!, [...spread(61, 6 * DAY, 4, 1), { at: NOW - 8 * DAY, ms: 5, ok: true }]);
    await seedAttempts(db, ids.failing!, spread(7, 20 * HOUR, 1, 0));
    await seedAttempts(db, ids.disabled!, spread(5, 2 * DAY, 2, 1));
    await seedAttempts(db, ids.deleted!, spread(9, 3 * HOUR, 3, 2));
    await seedAttempts(db, ids.fine!, [{ at: NOW - 20 * MIN, ms: 42, ok: true }]);
    const patch = await t.app.inject({ method: 'PATCH', url: `/admin/v1/webhooks/${ids.disabled}`, headers: t.admin.headers, payload: { enabled: false } });
    expect(patch.statusCode).toBe(200);
    const del = await t.app.inject({ method: 'DELETE', url: `/admin/v1/webhooks/${ids.deleted}`, headers: t.admin.headers });
    expect(del.statusCode).toBe(204);
  });
  afterAll(async () => t.close());

  const get = (url: string, headers: Record<string, string> = t.admin.headers) => t.app.inject({ method: 'GET', url, headers });
  const live = () => ['busy', 'failing', 'quiet', 'disabled', 'fine'].map((n) => ids[n]!).sort();

  it.each([
    ['the default 24 hours', ''],
    ['7 days', `since=${encodeURIComponent(new Date(NOW - 7 * DAY).toISOString())}`],
    ['the last 90 minutes', `since=${encodeURIComponent(new Date(NOW - 90 * MIN).toISOString())}`],
  ])('over %s, each target’s stats are exactly its own endpoint’s; deleted targets absent, disabled ones in', async (_label, query) => {
    const res = await get(`/admin/v1/webhooks/stats?limit=200${query ? `&${query}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { items: Array<{ webhookId: string; stats: unknown }>; nextCursor: string | null };
    expect(body.nextCursor).toBeNull();
    expect(body.items.map((i) => i.webhookId)).toEqual(live());
    for (const item of body.items) {
      const own = await get(`/admin/v1/webhooks/${item.webhookId}/stats${query ? `?${query}` : ''}`);
      expect(own.statusCode).toBe(200);
      expect(item.stats, item.webhookId).toEqual(own.json());
    }
    const of = (name: string) => body.items.find((i) => i.webhookId === ids[name])!.stats as { attempts: { total: number; succeeded: number; failed: number }; latencyMs: { p50: number | null } };
    // The cases the comparison covers (the default window): successes and failures, failures only, none, a
    // disabled target's; the shortest window leaves most targets without attempts.
    if (query === '') {
      expect(of('busy').attempts.succeeded).toBeGreaterThan(0);
      expect(of('busy').attempts.failed).toBeGreaterThan(0);
      expect(of('busy').latencyMs.p50).not.toBeNull();
      expect(of('failing').attempts).toEqual({ total: 7, succeeded: 0, failed: 7 });
      expect(of('disabled').attempts.total).toBeGreaterThan(0);
    }
    expect(of('quiet')).toMatchObject({ attempts: { total: 0 }, successRate: null, latencyMs: { p50: null, p95: null }, lastSuccessAt: null, lastFailureAt: null });
    expect(of('fine').attempts.total).toBe(1);
  });

  it('cuts a page before the target that would take it past its attempts budget, never below one target', async () => {
    const since = NOW - 7 * DAY;
    const counts = await attemptsPerTarget(t.ctx.database.queries, { webhookIds: live(), from: since, to: NOW });
    for (const id of live()) {
      const own = (await get(`/admin/v1/webhooks/${id}/stats?since=${encodeURIComponent(new Date(since).toISOString())}`)).json();
      expect(counts.get(id) ?? 0, id).toBe(own.attempts.total);
    }
    const ids = ['a', 'b', 'c', 'd'];
    const n = new Map([['a', 5], ['b', 0], ['c', 7], ['d', 1]]);
    expect(withinAttempts(ids, n, 5)).toEqual(['a', 'b']);
    expect(withinAttempts(ids, n, 12)).toEqual(['a', 'b', 'c']);
    expect(withinAttempts(ids, n, 13)).toEqual(ids);
    expect(withinAttempts(['c', 'a'], n, 1)).toEqual(['c']);
    expect(withinAttempts([], n, 1)).toEqual([]);
  });

  it('pages in the order of GET /admin/v1/webhooks, whose cursors it takes', async () => {
    for (const limit of [1, 2, 3]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await get(`/admin/v1/webhooks/stats?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json() as { items: Array<{ webhookId: string }>; nextCursor: string | null };
        expect(body.items.length).toBeLessThanOrEqual(limit);
        seen.push(...body.items.map((i) => i.webhookId));
        cursor = body.nextCursor;
        pages++;
      } while (cursor);
      expect(seen, `limit ${limit}`).toEqual(live());
      expect(pages).toBe(Math.ceil(live().length / limit));
    }
    const list = (await get('/admin/v1/webhooks?limit=2')).json() as { items: Array<{ id: string }>; nextCursor: string };
    const after = (await get(`/admin/v1/webhooks/stats?limit=2&cursor=${list.nextCursor}`)).json() as { items: Array<{ webhookId: string }> };
    expect(after.items.map((i) => i.webhookId)).toEqual(live().slice(2, 4));
    // Without a limit: 50 a page.
    expect((await get('/admin/v1/webhooks/stats')).json().items).toHaveLength(5);
  });

  it('bad since, limit or cursor is invalid_query as problem+json', async () => {
    const bad = [
      `since=${encodeURIComponent(new Date(NOW - 7 * DAY - MIN).toISOString())}`,
      `since=${encodeURIComponent(new Date(NOW + HOUR).toISOString())}`,
      'since=yesterday',
      'limit=0',
      'limit=201',
      'limit=ten',
      'cursor=not-a-cursor!',
      `cursor=${Buffer.from(JSON.stringify({ after: 'rec_1' })).toString('base64url')}`,
      'unknown=1',
    ];
    for (const query of bad) {
      const res = await get(`/admin/v1/webhooks/stats?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type'], query).toContain('application/problem+json');
      expect(res.json().code, query).toBe('invalid_query');
      expect(res.headers['x-request-id'], query).toBeTruthy();
    }
    expect((await get(`/admin/v1/webhooks/stats?limit=200&since=${encodeURIComponent(new Date(NOW - 7 * DAY).toISOString())}`)).statusCode).toBe(200);
  });

  it('needs an admin session with its CSRF token, or an admin token with admin:read', async () => {
    const url = '/admin/v1/webhooks/stats';
    const none = await get(url, {});
    expect(none.statusCode).toBe(401);
    expect(none.json().code).toBe('unauthorized');
    expect((await get(url, { cookie: t.admin.cookie })).json().code).toBe('csrf_failed');
    expect((await get(url, { authorization: `Bearer ${await t.token(['records:read'])}` })).statusCode).toBe(401);
    const token = async (scopes: string[]) => {
      const res = await t.app.inject({ method: 'POST', url: '/admin/v1/admin-tokens', headers: t.admin.headers, payload: { name: scopes.join(' '), scopes } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().token as string;
    };
    expect((await get(url, { authorization: `Bearer ${await token(['admin:read'])}` })).statusCode).toBe(200);
    const refused = await get(url, { authorization: `Bearer ${await token(['admin:webhooks'])}` });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('forbidden');
  });

  it('leaves the routes beside it as they were: a target named by id, and other methods on the path', async () => {
    expect((await get(`/admin/v1/webhooks/${ids.busy}`)).json().name).toBe('busy');
    const patch = await t.app.inject({ method: 'PATCH', url: '/admin/v1/webhooks/stats', headers: t.admin.headers, payload: { name: 'x' } });
    expect(patch.statusCode).toBe(404);
    expect(patch.json().code).toBe('not_found');
    expect((await t.app.inject({ method: 'DELETE', url: '/admin/v1/webhooks/stats', headers: t.admin.headers })).statusCode).toBe(404);
    expect((await get('/admin/v1/webhooks/stats/stats')).statusCode).toBe(404);
  });
});

describe.each(DIALECTS)('GET /admin/v1/webhooks/stats over a long window (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterAll(async () => t?.close());

  it('holds fewer targets a page the more hours its window has: at most 10,000 buckets a page', async () => {
    t = await createTestApp(dialect, {}, { clock: new ManualClock(NOW) });
    for (let i = 0; i < 61; i++) await seedTarget(t.ctx.database.db, `wh_${String(i).padStart(26, '0')}`);
    const page = async (query: string) => (await t!.app.inject({ method: 'GET', url: `/admin/v1/webhooks/stats?${query}`, headers: t!.admin.headers })).json() as { items: Array<{ stats: { buckets: unknown[] } }>; nextCursor: string | null };
    const week = await page(`limit=200&since=${encodeURIComponent(new Date(NOW - 7 * DAY).toISOString())}`);
    expect(week.items[0]!.stats.buckets).toHaveLength(169);
    expect(week.items).toHaveLength(59);
    expect(week.nextCursor).not.toBeNull();
    const rest = await page(`limit=200&since=${encodeURIComponent(new Date(NOW - 7 * DAY).toISOString())}&cursor=${week.nextCursor}`);
    expect(rest.items).toHaveLength(2);
    expect(rest.nextCursor).toBeNull();
    const day = await page('limit=200');
    expect(day.items).toHaveLength(61);
    expect(day.nextCursor).toBeNull();
  });
});

describe.each(DIALECTS)('GET /admin/v1/webhooks/stats holds the event loop a chunk of targets at a time (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterAll(async () => t?.close());

  /**
   * SPEC §12: a page of 59 targets' week is 9,971 hourly buckets. Read, built and written in one piece, its rows
   * (arriving from a reader thread at once), its health and its JSON held the loop 80-180 ms on a loaded 2-core
   * machine, with the sorts of its statements on SQLite's main connection 100-170 ms more (docs/target-health.md).
   * Counted in turns of the event loop and rows, not milliseconds: each turn reads, builds and writes one chunk of
   * targets, at most CHUNK_BUCKETS buckets.
   */
  it('reads, builds and writes a page of a week in chunks of at most CHUNK_BUCKETS buckets, each in a turn of its own', async () => {
    t = await createTestApp(dialect, {}, { clock: new ManualClock(NOW) });
    const db = t.ctx.database.db;
    await seedEvent(db);
    const targets = Array.from({ length: 60 }, (_, i) => `wh_${String(i).padStart(26, '0')}`);
    for (const id of targets) await seedTarget(db, id);
    // A success every hour of the week for every target (on its delivered job's row): every bucket has a row. The
    // first target has two an hour: the page's windows hold more than OFF_MAIN_ATTEMPTS.
    const jobs = targets.flatMap((id, i) =>
      Array.from({ length: i === 0 ? 2 * 169 : 169 }, (_, k) => ({ id, at: Math.max(NOW - (k % 169) * HOUR - i - k, NOW - 7 * DAY + i), ms: (k * 7919 + i) % 1000 })),
    );
    expect(59 * 169 + 169).toBeGreaterThan(OFF_MAIN_ATTEMPTS);
    for (let i = 0; i < jobs.length; i += 500) {
      const rows = jobs.slice(i, i + 500).map(
        (j, k) => sql`(${`del_${String(i + k).padStart(26, '0')}`}, ${j.id}, 'evt_1', 'record.created', 'issues', 'rec_1', 'delivered', 1, 0, ${j.at}, ${j.at}, ${j.at}, ${j.at}, ${j.ms}, 200, '')`,
      );
      await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at,
                                           success_started_at, success_duration_ms, success_status_code, success_snippet) values ${sql.join(rows)}`.execute(db);
    }
    const since = encodeURIComponent(new Date(NOW - 7 * DAY).toISOString());
    const perChunk = Math.floor(CHUNK_BUCKETS / 169);

    // Each statement by target and hour notes its turn and rows; each item written as JSON, its turn.
    const counter = turnCounter();
    const hourRows: Array<{ turn: number; rows: number; offMain: boolean }> = [];
    const written: number[] = [];
    const database = t.ctx.database as { -readonly [K in keyof Database]: Database[K] };
    const [queries, offMain] = [database.queries, database.offMain];
    database.queries = queries.withPlugin(notingHourRows((rows) => hourRows.push({ turn: counter.turn, rows, offMain: false })));
    database.offMain = offMain.withPlugin(notingHourRows((rows) => hourRows.push({ turn: counter.turn, rows, offMain: true })));
    const of = JsonBytes.of.bind(JsonBytes);
    const spy = vi.spyOn(JsonBytes, 'of').mockImplementation((value) => {
      if ((value as { webhookId?: string }).webhookId !== undefined) written.push(counter.turn);
      return of(value);
    });
    let page: { items: Array<{ webhookId: string; stats: { attempts: { total: number }; buckets: unknown[] } }>; nextCursor: string | null };
    try {
      const res = await t.app.inject({ method: 'GET', url: `/admin/v1/webhooks/stats?limit=200&since=${since}`, headers: t.admin.headers });
      expect(res.statusCode, res.body).toBe(200);
      page = res.json();
    } finally {
      counter.stop();
      spy.mockRestore();
      database.queries = queries;
      database.offMain = offMain;
    }
    expect(page.items).toHaveLength(59);
    expect(page.nextCursor).not.toBeNull();
    for (const item of page.items) {
      expect(item.stats.buckets).toHaveLength(169);
      expect(item.stats.attempts.total).toBe(item.webhookId === targets[0] ? 2 * 169 : 169);
    }
    const own = await t.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${targets[58]}/stats?since=${since}`, headers: t.admin.headers });
    expect(page.items[58]!.stats).toEqual(own.json());

    // Every item was written as its chunk was read, at most a chunk of them a turn.
    expect(written).toHaveLength(59);
    const perTurn = (turns: number[]) => [...countBy(turns).values()];
    expect(Math.max(...perTurn(written)), `items written a turn: ${written.join(', ')}`).toBeLessThanOrEqual(perChunk);
    expect(new Set(written).size).toBeGreaterThanOrEqual(Math.ceil(59 / perChunk));
    // Every bucket's row was read by a statement of at most a chunk's buckets, one such statement a turn.
    expect(hourRows.reduce((n, r) => n + r.rows, 0)).toBe(59 * 169);
    for (const r of hourRows) expect(r.rows, JSON.stringify(hourRows)).toBeLessThanOrEqual(perChunk * 169);
    expect(new Set(hourRows.map((r) => r.turn)).size, JSON.stringify(hourRows)).toBe(hourRows.length);
    // Past OFF_MAIN_ATTEMPTS, never on SQLite's main connection, whose budget its sorts would outrun.
    expect(hourRows.every((r) => r.offMain)).toBe(true);
  });
});

const countBy = (values: readonly number[]): Map<number, number> => {
  const out = new Map<number, number>();
  for (const v of values) out.set(v, (out.get(v) ?? 0) + 1);
  return out;
};

/** Calls `noted` with the rows of each statement that counts attempts by target and hour (countsByTargetHour). */
function notingHourRows(noted: (rows: number) => void): KyselyPlugin {
  const hourly = new WeakSet<object>();
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      if (JSON.stringify(args.node).includes('3600000') && JSON.stringify(args.node).includes('webhook_id')) hourly.add(args.queryId);
      return args.node;
    },
    transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => {
      if (hourly.has(args.queryId)) noted(args.result.rows.length);
      return args.result;
    },
  };
}

describe.each(DIALECTS)('GET /admin/v1/webhooks/{id}/stats of a busy target (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterAll(async () => t?.close());

  /**
   * Its two percentiles each sort every attempt of the window by duration. On SQLite's main connection the budget is
   * checked only as rows are read, so the sort after a read within it ran there to its end: past OFF_MAIN_ATTEMPTS
   * they go where such a sort holds nothing (Database.offMain), as the overview's do. Claimed by where each statement
   * ran, not by a time.
   */
  it('sorts its durations off the main connection once its window holds more than OFF_MAIN_ATTEMPTS attempts', async () => {
    t = await createTestApp(dialect, {}, { clock: new ManualClock(NOW) });
    const db = t.ctx.database.db;
    await seedEvent(db);
    const [busy, quiet] = [`wh_${'1'.padStart(26, '0')}`, `wh_${'2'.padStart(26, '0')}`];
    for (const id of [busy, quiet]) await seedTarget(db, id);
    const successes = [...Array.from({ length: OFF_MAIN_ATTEMPTS + 1 }, (_, k) => ({ id: busy, k })), ...Array.from({ length: 10 }, (_, k) => ({ id: quiet, k }))];
    for (let i = 0; i < successes.length; i += 500) {
      const rows = successes.slice(i, i + 500).map(({ id, k }, j) => {
        const at = NOW - 1 - (k % (20 * 60)) * MIN;
        return sql`(${`del_${String(i + j).padStart(26, '0')}`}, ${id}, 'evt_1', 'record.created', 'issues', 'rec_1', 'delivered', 1, 0, ${at}, ${at}, ${at}, ${at}, ${(k * 7919) % 1000}, 200, '')`;
      });
      await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at,
                                           success_started_at, success_duration_ms, success_status_code, success_snippet) values ${sql.join(rows)}`.execute(db);
    }
    const ranks: Array<{ webhookId: string; offMain: boolean }> = [];
    const database = t.ctx.database as { -readonly [K in keyof Database]: Database[K] };
    const [queries, offMain] = [database.queries, database.offMain];
    let asked = '';
    database.queries = queries.withPlugin(notingRankStatements(() => ranks.push({ webhookId: asked, offMain: false })));
    database.offMain = offMain.withPlugin(notingRankStatements(() => ranks.push({ webhookId: asked, offMain: true })));
    const stats: Record<string, { attempts: { total: number }; latencyMs: { p50: number | null; p95: number | null } }> = {};
    try {
      for (const id of [busy, quiet]) {
        asked = id;
        const res = await t.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${id}/stats`, headers: t.admin.headers });
        expect(res.statusCode, res.body).toBe(200);
        stats[id] = res.json();
      }
    } finally {
      database.queries = queries;
      database.offMain = offMain;
    }
    expect(stats[busy]!.attempts.total).toBe(OFF_MAIN_ATTEMPTS + 1);
    expect(stats[quiet]!.attempts.total).toBe(10);
    for (const s of Object.values(stats)) expect(s.latencyMs.p95).not.toBeNull();
    expect(ranks).toEqual([
      { webhookId: busy, offMain: true },
      { webhookId: busy, offMain: true },
      { webhookId: quiet, offMain: false },
      { webhookId: quiet, offMain: false },
    ]);
  });
});

/** Calls `noted` for each statement that takes the duration at a rank (durationAtRank: ordered by duration, one row). */
function notingRankStatements(noted: () => void): KyselyPlugin {
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      const text = JSON.stringify(args.node);
      if (args.node.kind === 'SelectQueryNode' && text.includes('"offset"') && text.includes('duration_ms')) noted();
      return args.node;
    },
    transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => args.result,
  };
}
