#!/usr/bin/env node
/**
 * The admin UI's health overview at 1,000 targets (not part of `bench/run.mjs`): what it costs to read every target's
 * last 24 hours one target at a time (GET /admin/v1/webhooks/{id}/stats, six at a time, as the UI did) and in pages
 * (GET /admin/v1/webhooks/stats), and one busy target's 7 days, with /healthz timed beside each.
 *
 *   node bench/health-overview.mjs seed sqlite|postgres           # 1,000 targets, 2,000,000 attempts over 7 days
 *   node bench/health-overview.mjs measure sqlite|postgres [--main <svc.mjs>] [--per-target] [--bulk] [--busy]
 *       [--limit N] [--rounds N] [--week-only] [--cpu-prof <dir>]
 *
 * Attempts: 1,200,000 successes kept on delivered jobs (migration 020) and 800,000 failed attempt rows (two for each of
 * 400,000 dead jobs), started uniformly over the last 7 days (as of the seed), shared among the targets as 1/(i+1)
 * (the busiest ~267,000). 100 targets are disabled and 10 deleted. The database stays in /tmp/svc-health-bench
 * (BENCH_HEALTH_DIR) or PostgreSQL's svc_health_bench (BENCH_HEALTH_PG).
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { mkdirSync, rmSync } from 'node:fs';
import { admin, startSvc, SVC_MAIN } from './lib/svc.mjs';
import { createDb, dbUrl, dropDb } from './lib/pg.mjs';

const [mode, dialect] = process.argv.slice(2);
const arg = (name) => { const i = process.argv.indexOf(name); return i < 0 ? null : process.argv[i + 1]; };
const has = (name) => process.argv.includes(name);
// Overridable, so two people on one machine seed and walk databases of their own.
const DIR = process.env.BENCH_HEALTH_DIR ?? '/tmp/svc-health-bench';
const PG_NAME = process.env.BENCH_HEALTH_PG ?? 'svc_health_bench';
const databaseUrl = dialect === 'sqlite' ? `sqlite:${DIR}/svc.db` : dbUrl(PG_NAME);
const TARGETS = 1000;
const JOBS_OK = 1_200_000;
const JOBS_DEAD = 400_000;
const WEEK = 7 * 86_400_000;

async function seed() {
  if (dialect === 'sqlite') { rmSync(DIR, { recursive: true, force: true }); mkdirSync(DIR, { recursive: true }); }
  else { await dropDb(PG_NAME); await createDb(PG_NAME); }
  const svc = await startSvc({ databaseUrl, mode: 'api' });
  const a = await admin(svc.url);
  const ids = [];
  for (let i = 0; i < TARGETS; i++) ids.push((await a.webhook('https://127.0.0.1:9/hook', i)).id);
  await svc.stop();
  const now = Date.now();
  // Target of the n-th job: floor(exp(u·ln(T+1))) - 1 with u = frac(n·φ), so target i gets ~1/(i+1) of them.
  const target = (n) => `(select id from bench_targets where idx = cast(exp(((${n}) * 0.6180339887 - cast((${n}) * 0.6180339887 as bigint)) * ln(${TARGETS + 1})) as bigint) - 1)`;
  const frac = (n, k) => `((${n}) * ${k} - cast((${n}) * ${k} as bigint))`;
  const t0 = performance.now();
  if (dialect === 'sqlite') {
    const db = new Database(`${DIR}/svc.db`);
    db.pragma('journal_mode = wal');
    db.exec(`insert into events (id, topic, collection, record_id, created_at, payload) values ('evt_bench', 'record.created', 'issues', 'rec_1', ${now}, '{}')`);
    db.exec('create table bench_targets (idx integer primary key, id text)');
    const ins = db.prepare('insert into bench_targets values (?, ?)');
    ids.forEach((id, i) => ins.run(i, id));
    db.exec(`with recursive k(n) as (select 1 union all select n + 1 from k where n < ${JOBS_OK + JOBS_DEAD})
      insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at,
                                 success_started_at, success_duration_ms, success_status_code, success_snippet)
      select 'del_bench' || n, ${target('n')}, 'evt_bench', 'record.created', 'issues', 'rec_1',
             case when n <= ${JOBS_OK} then 'delivered' else 'dead' end, case when n <= ${JOBS_OK} then 1 else 2 end, 0, ${now}, ${now}, ${now},
             case when n <= ${JOBS_OK} then ${now} - cast(${frac('n', 0.7548776662)} * ${WEEK} as bigint) end,
             case when n <= ${JOBS_OK} then 20 + (n * 7919) % 1500 end, case when n <= ${JOBS_OK} then 200 end, case when n <= ${JOBS_OK} then '' end
        from k`);
    db.exec(`insert into delivery_attempts_rows (job_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet, webhook_id)
      select j.id, x.number, ${now} - cast(${frac('(cast(substr(j.id, 10) as integer) * 2 + x.number)', 0.5698402910)} * ${WEEK} as bigint),
             100 + (cast(substr(j.id, 10) as integer) * 104729 + x.number) % 9000, 503, 'http_status', 'HTTP 503', '', j.webhook_id
        from delivery_jobs j, (select 1 as number union all select 2) x where j.state = 'dead'`);
    db.exec('drop table bench_targets');
    db.exec('analyze');
    db.close();
  } else {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    await c.query(`insert into events (id, topic, collection, record_id, created_at, payload) values ('evt_bench', 'record.created', 'issues', 'rec_1', ${now}, '{}')`);
    await c.query('create table bench_targets (idx bigint primary key, id text)');
    await c.query('insert into bench_targets select ordinality - 1, id from unnest($1::text[]) with ordinality as u(id)', [ids]);
    await c.query(`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at,
                                 success_started_at, success_duration_ms, success_status_code, success_snippet)
      select 'del_bench' || n, t.id, 'evt_bench', 'record.created', 'issues', 'rec_1',
             case when n <= ${JOBS_OK} then 'delivered' else 'dead' end, case when n <= ${JOBS_OK} then 1 else 2 end, 0, ${now}, ${now}, ${now},
             case when n <= ${JOBS_OK} then ${now} - floor(((n * 0.7548776662) - floor(n * 0.7548776662)) * ${WEEK})::bigint end,
             case when n <= ${JOBS_OK} then 20 + (n * 7919) % 1500 end, case when n <= ${JOBS_OK} then 200 end, case when n <= ${JOBS_OK} then '' end
        from generate_series(1::bigint, ${JOBS_OK + JOBS_DEAD}) n
        join bench_targets t on t.idx = floor(exp(((n * 0.6180339887) - floor(n * 0.6180339887)) * ln(${TARGETS + 1})))::bigint - 1`);
    await c.query(`insert into delivery_attempts_rows (job_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet, webhook_id)
      select j.id, x.number, ${now} - floor(((m * 0.5698402910) - floor(m * 0.5698402910)) * ${WEEK})::bigint,
             100 + (substr(j.id, 10)::bigint * 104729 + x.number) % 9000, 503, 'http_status', 'HTTP 503', '', j.webhook_id
        from delivery_jobs j cross join (values (1), (2)) x(number), lateral (select substr(j.id, 10)::bigint * 2 + x.number as m) mm
       where j.state = 'dead'`);
    await c.query('drop table bench_targets');
    await c.query('vacuum analyze');
    await c.end();
  }
  console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // 100 disabled, 10 deleted: through the API, as an admin would.
  const again = await startSvc({ databaseUrl, mode: 'api' });
  const b = await admin(again.url);
  const session = await login(again.url);
  for (let i = 0; i < 100; i++) await session.call('PATCH', `/admin/v1/webhooks/${ids[10 + i * 9]}`, { enabled: false });
  for (let i = 0; i < 10; i++) await session.call('DELETE', `/admin/v1/webhooks/${ids[5 + i * 97]}`);
  void b;
  await again.stop();
}

async function login(url) {
  const res = await fetch(`${url}/admin/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password-123' }) });
  const json = await res.json();
  const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const headers = { cookie, 'x-svc-csrf': json.csrfToken };
  return {
    async call(method, path, body) {
      const r = await fetch(url + path, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const text = await r.text();
      if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${text.slice(0, 300)}`);
      return text ? JSON.parse(text) : null;
    },
  };
}

/** Runs `fn` while /healthz is asked every 20 ms; the longest answer time. */
async function withHealthz(url, fn) {
  let worst = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      const t = performance.now();
      await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
      worst = Math.max(worst, performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  // prom-client's event loop delay histogram starts over at each read of /metrics: read before, the max after is the walk's.
  await lagMaxMs(url);
  const t0 = performance.now();
  const result = await fn();
  const ms = performance.now() - t0;
  done = true;
  await poll;
  return { result, ms: Math.round(ms), healthzMs: Math.round(worst), lagMaxMs: await lagMaxMs(url) };
}

/** svc_nodejs_eventloop_lag_max_seconds, in ms: the event loop's longest wait since /metrics was last read. */
async function lagMaxMs(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^svc_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  return m ? Math.round(Number(m[1]) * 1000) : null;
}

async function measure() {
  const main = arg('--main') ?? SVC_MAIN;
  const svc = await startSvc({ main, databaseUrl, mode: 'api', cpuProfDir: arg('--cpu-prof') });
  const s = await login(svc.url);
  const targets = [];
  let cursor = null;
  do {
    const page = await s.call('GET', `/admin/v1/webhooks?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    targets.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  const out = { main, dialect, targets: targets.length };
  const rounds = Number(arg('--rounds') ?? 2);
  if (has('--per-target')) {
    for (let r = 0; r < rounds; r++) {
      const { ms, healthzMs, lagMaxMs, result } = await withHealthz(svc.url, async () => {
        const stats = new Map();
        for (let i = 0; i < targets.length; i += 6) {
          await Promise.all(targets.slice(i, i + 6).map(async (t) => stats.set(t.id, await s.call('GET', `/admin/v1/webhooks/${t.id}/stats`))));
        }
        return [...stats.values()].reduce((n, x) => n + x.attempts.total, 0);
      });
      console.log(JSON.stringify({ ...out, what: 'per-target 24 h, 6 at a time', ms, healthzMs, lagMaxMs, attempts: result }));
    }
  }
  if (has('--bulk')) {
    const limit = Number(arg('--limit') ?? 200);
    const week = new Date(Date.now() - 7 * 86_400_000 + 60_000).toISOString();
    for (const since of has('--week-only') ? [week] : [null, week]) {
      for (let r = 0; r < rounds; r++) {
        const { ms, healthzMs, lagMaxMs, result } = await withHealthz(svc.url, async () => {
          let n = 0;
          let pages = 0;
          let c = null;
          do {
            const page = await s.call('GET', `/admin/v1/webhooks/stats?limit=${limit}${since ? `&since=${encodeURIComponent(since)}` : ''}${c ? `&cursor=${c}` : ''}`);
            for (const item of page.items) n += item.stats.attempts.total;
            c = page.nextCursor;
            pages++;
          } while (c);
          return { attempts: n, pages };
        });
        console.log(JSON.stringify({ ...out, what: `bulk ${since ? '7 days' : '24 h'}, limit ${limit}`, ms, healthzMs, lagMaxMs, ...result }));
      }
    }
  }
  if (has('--busy')) {
    const since = new Date(Date.now() - 7 * 86_400_000 + 60_000).toISOString();
    // The busiest target is the first one created (1/(i+1)).
    const busiest = [...targets].sort((x, y) => x.createdAt.localeCompare(y.createdAt) || x.id.localeCompare(y.id))[0];
    for (let r = 0; r < rounds; r++) {
      const { ms, healthzMs, lagMaxMs, result } = await withHealthz(svc.url, () => s.call('GET', `/admin/v1/webhooks/${busiest.id}/stats?since=${encodeURIComponent(since)}`));
      console.log(JSON.stringify({ ...out, what: 'busiest target, 7 days', ms, healthzMs, lagMaxMs, attempts: result.attempts.total }));
    }
  }
  await svc.stop();
}

if (mode === 'seed') await seed();
else if (mode === 'measure') await measure();
else throw new Error('usage: health-overview.mjs seed|measure sqlite|postgres');
