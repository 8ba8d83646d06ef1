import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { paced } from './load.mjs';
import { createDb, query } from './pg.mjs';
import { CORES, spawnOn, stop, withCpu } from './proc.mjs';
import { percentile } from './stats.mjs';
import { SECRET_KEY, admin, recordData, startSvc } from './svc.mjs';

const dist = (p) => new URL(`../../packages/server/dist/${p}`, import.meta.url).href;
const PRUNER = fileURLToPath(new URL('./w13-pruner-child.mjs', import.meta.url));
const TARGETS = 10;
const PENDING = 5_000;
// The worker claims per target up to its free slots: SVC_WEBHOOK_TARGET_CONCURRENCY, 8 by default.
const CLAIM_LIMIT = 8;
const CHUNK = 50_000;
// Each history event carries a small record payload: the claim reads the payload of the jobs it takes, never of history.
const PAYLOAD = JSON.stringify({ id: 'rec_x', data: recordData(0) }).slice(0, 300);
const WINDOW_S = 0.0001 * 86_400;
const TINY = { SVC_RETENTION_DELIVERED_DAYS: '0.0001', SVC_RETENTION_EVENTS_DAYS: '0.0001' };
const label = (kind) => (kind === 'sqlite' ? 'SQLite' : 'PostgreSQL');

// Bulk SQL, not the API: rows [from, to) of delivered history (job with its one attempt on its row, as svc records a
// success since migration 020, and its event), or of due pending jobs.
function rowsSql(kind, what) {
  const pad = (p, x) => (kind === 'sqlite' ? `printf('${p}%010d', ${x})` : `'${p}' || lpad((${x})::text, 10, '0')`);
  const n = kind === 'sqlite' ? 'with recursive n(i) as (select @a union all select i + 1 from n where i < @b) ' : '';
  const from = kind === 'sqlite' ? 'from n' : 'from generate_series($1::bigint, $2::bigint) as n(i)';
  const base = kind === 'sqlite' ? '@base' : '$3::bigint';
  const payload = kind === 'sqlite' ? '@payload' : '$4::text';
  const h = what === 'history' ? 'h' : 'p';
  const wh = `'wh_' || (i % ${TARGETS})`;
  const events = `${n}insert into events (id, topic, collection, record_id, created_at, payload)
    select ${pad(`evt_${h}`, 'i')}, 'record.created', 'bench', ${pad(`rec_${h}`, 'i')}, ${base} + i, ${payload} ${from}`;
  const state = what === 'history' ? `'delivered', 1` : `'pending', 0`;
  const success = what === 'history' ? `${base} + i + 30, 8, 200, 'ok'` : 'null, null, null, null';
  const jobs = `${n}insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at,
                                              success_started_at, success_duration_ms, success_status_code, success_snippet)
    select ${pad(`job_${h}`, 'i')}, ${wh}, ${pad(`evt_${h}`, 'i')}, 'record.created', 'bench', ${pad(`rec_${h}`, 'i')}, ${state}, 0, ${base} + i, ${base} + i, ${base} + i + 40, ${success} ${from}`;
  return [events, jobs];
}

async function insertRows(kind, url, what, from, to, base) {
  const statements = rowsSql(kind, what);
  if (kind === 'sqlite') {
    const db = new Database(url.slice('sqlite:'.length));
    db.pragma('synchronous = NORMAL');
    try {
      for (let a = from; a < to; a += CHUNK) {
        const b = Math.min(to, a + CHUNK) - 1;
        // BigInt binds as an integer (a JS number binds as a real: 'wh_' || 1.0).
        db.transaction(() => statements.forEach((s, k) => db.prepare(s).run({ a: BigInt(a), b: BigInt(b), base: BigInt(base), ...(k === 0 ? { payload: PAYLOAD } : {}) })))();
      }
    } finally {
      db.close();
    }
    return;
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (let a = from; a < to; a += CHUNK) {
      const b = Math.min(to, a + CHUNK) - 1;
      await c.query('begin');
      for (const [k, s] of statements.entries()) await c.query(s, k === 0 ? [a, b, base, PAYLOAD] : [a, b, base]);
      await c.query('commit');
    }
  } finally {
    await c.end();
  }
}

/** svc's own migrations and claim, loaded from the built server (packages/server/dist). */
async function serverModules() {
  const [{ connect }, { migrateToLatest }, { claim }] = await Promise.all([import(dist('db/connect.js')), import(dist('db/migrate.js')), import(dist('webhooks/queue/claim.js'))]);
  return { connect, migrateToLatest, claim };
}

/** Two databases, 10,000 and `history` delivered jobs (+ events, attempts), the same targets and due pending jobs. */
async function buildClaimDatabases(ctx, kind, history, small) {
  const m = await serverModules();
  const now = Date.now();
  const histBase = now - 40 * 86_400_000;
  const dir = ctx.dir('w13');
  const names = { small: `${ctx.pgPrefix}_w13_small`, large: `${ctx.pgPrefix}_w13_large` };
  const urls = kind === 'sqlite' ? { small: `sqlite:${join(dir, 'claim-small.db')}`, large: `sqlite:${join(dir, 'claim-large.db')}` } : { small: await createDb(names.small), large: null };
  const h = await m.connect(urls.small, { sqliteSynchronous: 'NORMAL', poolSize: 2 });
  try {
    await m.migrateToLatest(h);
    for (let t = 0; t < TARGETS; t++) {
      await h.db.insertInto('webhooks').values({ id: `wh_${t}`, name: `bench-${t}`, url: `https://127.0.0.1:9/hook`, topics: '["record.created"]', enabled: 1, created_at: histBase, updated_at: histBase }).execute();
    }
  } finally {
    await h.close();
  }
  const t0 = performance.now();
  await insertRows(kind, urls.small, 'pending', 0, PENDING, now - 60_000);
  await insertRows(kind, urls.small, 'history', 0, small, histBase);
  if (kind === 'sqlite') {
    const db = new Database(urls.small.slice('sqlite:'.length));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    copyFileSync(urls.small.slice('sqlite:'.length), urls.large.slice('sqlite:'.length));
  } else {
    urls.large = await createDb(names.large, names.small);
  }
  await insertRows(kind, urls.large, 'history', small, history, histBase);
  // svc never runs ANALYZE on these tables; PostgreSQL's autovacuum would after this many inserts, so it runs here.
  if (kind === 'pg') for (const u of [urls.small, urls.large]) await query(u, 'vacuum analyze');
  ctx.progress('W13', `${kind}: built ${small} and ${history} delivered jobs (+ events, attempts) and ${PENDING} due ones in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return { urls, m };
}

/** `reps` claims of 8 jobs (the real statement, through svc's claim()); the claimed jobs go back to pending untimed. */
async function timeClaims(m, h, reps) {
  const us = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const [jobs] = await m.claim(h.db, h.caps, { now: Date.now(), leaseMs: 60_000, targets: [{ webhookId: `wh_${r % TARGETS}`, limit: CLAIM_LIMIT }] });
    us.push((performance.now() - t0) * 1000);
    if (jobs.length !== CLAIM_LIMIT) throw new Error(`W13: a claim took ${jobs.length} jobs, expected ${CLAIM_LIMIT}`);
    await h.db.updateTable('delivery_jobs').set({ state: 'pending', lease_id: null, lease_expires_at: null }).where('id', 'in', jobs.map((j) => j.id)).execute();
  }
  return us.sort((a, b) => a - b);
}

/** Part 1: the claim statement's time with 10,000 and with `history` delivered jobs, rounds interleaved. */
async function claimFlatness(ctx, kind) {
  const { opts } = ctx;
  const small = Math.min(10_000, opts.w13History);
  const { urls, m } = await buildClaimDatabases(ctx, kind, opts.w13History, small);
  // Both sides commit without waiting for the disk (SQLite NORMAL, PostgreSQL synchronous_commit off): a commit's
  // flush does not depend on the table's history, and on a shared disk its noise would swamp the statement's cost.
  if (kind === 'pg') for (const name of ['small', 'large']) await query(urls[name], `alter database ${ctx.pgPrefix}_w13_${name} set synchronous_commit = off`);
  const handles = { small: await m.connect(urls.small, { sqliteSynchronous: 'NORMAL', poolSize: 2 }), large: await m.connect(urls.large, { sqliteSynchronous: 'NORMAL', poolSize: 2 }) };
  const rounds = { small: [], large: [] };
  try {
    for (const side of ['small', 'large']) await timeClaims(m, handles[side], 100);
    for (let r = 1; r <= opts.rounds; r++) {
      for (const side of ['small', 'large']) {
        const us = await timeClaims(m, handles[side], opts.w13Claims);
        const res = { n: us.length, p50: percentile(us, 50), p99: percentile(us, 99), max: us.at(-1) };
        rounds[side].push(res);
        ctx.progress('W13', `${kind} claim round ${r}/${opts.rounds} ${side === 'small' ? small : opts.w13History} delivered: median ${res.p50.toFixed(0)} µs, p99 ${res.p99.toFixed(0)} µs (${res.n} claims of ${CLAIM_LIMIT})`);
      }
    }
  } finally {
    await handles.small.close();
    await handles.large.close();
  }
  const sizes = `${opts.w13History.toLocaleString('en-US')} vs ${small.toLocaleString('en-US')} delivered jobs`;
  ctx.ratioCell({ workload: 'W13', measure: `${label(kind)} claim of ${CLAIM_LIMIT}, median, ${sizes}`, unit: 'µs', baseline: rounds.small.map((x) => x.p50), svc: rounds.large.map((x) => x.p50), max: 1.5, raw: rounds });
  ctx.ratioCell({ workload: 'W13', measure: `${label(kind)} claim of ${CLAIM_LIMIT}, p99, ${sizes}`, unit: 'µs', baseline: rounds.small.map((x) => x.p99), svc: rounds.large.map((x) => x.p99), max: 1.5 });
}

/** Row counts of the pruned tables every `everyMs`, from a connection of the harness's own. */
function countRows(kind, url, everyMs) {
  const tables = ['delivery_jobs', 'delivery_attempts', 'events'];
  const samples = [];
  const sql = `select ${tables.map((t) => `(select count(*) from ${t}) as ${t}`).join(', ')}`;
  const db = kind === 'sqlite' ? new Database(url.slice('sqlite:'.length), { readonly: true }) : new pg.Client({ connectionString: url });
  let stopped = false;
  const loop = (async () => {
    if (kind === 'pg') await db.connect();
    const t0 = performance.now();
    for (let i = 0; i < 10_000 && !stopped; i++) {
      const row = kind === 'sqlite' ? db.prepare(sql).get() : (await db.query(sql)).rows[0];
      samples.push({ s: Math.round((performance.now() - t0) / 100) / 10, ...Object.fromEntries(tables.map((t) => [t, Number(row[t])])) });
      for (let w = 0; w < everyMs / 100 && !stopped; w++) await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    if (kind === 'sqlite') db.close();
    else await db.end();
    return samples;
  };
}

/**
 * Part 2, one side: `svc serve` with retention tiny (`on`) or the defaults (`off`), its target, a token, and a
 * paused pruner process on the server core.
 */
async function startSide(ctx, kind, receiver, on) {
  const { opts } = ctx;
  const mode = on ? 'on' : 'off';
  const url = kind === 'sqlite' ? `sqlite:${join(ctx.dir('w13'), `soak-${mode}.db`)}` : await createDb(`${ctx.pgPrefix}_w13_soak_${mode}`);
  const env = on ? TINY : {};
  const svc = await startSvc({ mode: 'serve', databaseUrl: url, tls: ctx.tls, logFile: ctx.logFile(`w13-${kind}-${mode}`), env });
  const side = { kind, mode, url, svc, pruner: null, passes: [] };
  const a = await admin(svc.url);
  await a.collection('bench');
  const headers = { authorization: `Bearer ${await a.token()}` };
  await a.webhook(receiver.urls[0]);
  side.write = { url: `${svc.url}/api/v1/collections/bench/records`, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ data: recordData(1) }), rate: opts.w13Rate, connections: 16 };
  side.read = { url: `${svc.url}/api/v1/collections/bench/records?limit=50`, headers, rate: opts.w13Rate, connections: 16 };
  // The same pruner on both sides; with the default retention its passes find nothing to remove.
  side.pruner = spawnOn(CORES.server, [process.execPath, PRUNER, JSON.stringify({ everyMs: opts.w13PruneEveryMs })], { ipc: true, env: { SVC_DATABASE_URL: url, SVC_SECRET_KEY: SECRET_KEY, ...env }, logFile: ctx.logFile(`w13-${kind}-${mode}-pruner`) });
  await new Promise((resolve, reject) => {
    side.pruner.on('message', (msg) => (msg.ready ? resolve() : msg.pass && side.passes.push(msg.pass)));
    side.pruner.exitPromise.then((e) => reject(new Error(`W13 pruner exited (${e.code ?? e.signal})`)));
  });
  return side;
}

async function stopSide(side) {
  if (!side) return;
  const { pruner } = side;
  if (pruner?.connected) {
    pruner.send({ cmd: 'stop' }, () => {});
    await Promise.race([pruner.exitPromise, new Promise((r) => setTimeout(r, 10_000))]);
  }
  await stop(pruner);
  await side.svc.stop();
}

const pruner = (side, cmd) => side.pruner.connected && side.pruner.send({ cmd }, () => {});

/** Paced writes and reads against one side for `seconds`, its pruner running; rows counted every 2 s. */
async function loadSide(ctx, side, seconds, { counted = true } = {}) {
  pruner(side, 'resume');
  try {
    const stopCounting = counted ? countRows(side.kind, side.url, 2_000) : null;
    const before = side.passes.length;
    const { result, cpu } = await withCpu(side.svc.pid, () => Promise.all([paced({ ...side.write, duration: seconds }), paced({ ...side.read, duration: seconds })]));
    const [writes, reads] = result;
    const samples = stopCounting ? await stopCounting() : [];
    const during = side.passes.slice(before);
    const ok = during.filter((p) => p.removed);
    const failed = during.filter((p) => p.failed);
    const removed = ok.reduce((s, p) => s + p.removed.delivery_jobs + p.removed.delivery_attempts + p.removed.events, 0);
    const max = Object.fromEntries(['delivery_jobs', 'delivery_attempts', 'events'].map((t) => [t, Math.max(0, ...samples.map((x) => x[t]))]));
    return { writes, reads, serverCpu: cpu, samples, passes: during, okPasses: ok.length, failedPasses: failed.length, failures: [...new Set(failed.map((p) => p.failed))], removed, longestPassMs: Math.max(0, ...ok.map((p) => p.ms)), max };
  } finally {
    pruner(side, 'pause');
  }
}

/**
 * Part 2: both sides up at once, each warmed for as long as the window (so the `on` side's passes have rows to
 * remove from the first measured second), then measured rounds interleaved off, on, off, on…, each with only its own
 * pruner running.
 */
async function retentionUnderLoad(ctx, kind, receiver) {
  const { opts } = ctx;
  const sides = {};
  try {
    sides.off = await startSide(ctx, kind, receiver, false);
    sides.on = await startSide(ctx, kind, receiver, true);
    const warm = Math.ceil(WINDOW_S) + 2;
    for (const mode of ['off', 'on']) await loadSide(ctx, sides[mode], warm, { counted: false });
    const rounds = { off: [], on: [] };
    for (let r = 1; r <= opts.w13Rounds; r++) {
      for (const mode of ['off', 'on']) {
        const res = await loadSide(ctx, sides[mode], opts.w13Seconds);
        rounds[mode].push(res);
        const warning = [res.writes.warning, res.reads.warning].filter(Boolean).join('; ');
        ctx.progress('W13', `${kind} retention ${mode} round ${r}/${opts.w13Rounds}: creates p99 ${res.writes.latency.p99.toFixed(1)} ms (${Math.round(res.writes.rps)}/s), lists p99 ${res.reads.latency.p99.toFixed(1)} ms (${Math.round(res.reads.rps)}/s), svc CPU ${Math.round(res.serverCpu * 100)}%; ${res.okPasses} passes removed ${res.removed} rows (longest ${Math.round(res.longestPassMs)} ms)${res.failedPasses ? `, ${res.failedPasses} failed (${res.failures.join(', ')})` : ''}; peak rows: jobs ${res.max.delivery_jobs}, attempts ${res.max.delivery_attempts}, events ${res.max.events}${warning ? '  ! ' + warning : ''}`);
      }
    }
    for (const what of ['writes', 'reads']) {
      const name = what === 'writes' ? 'create' : 'list limit=50';
      ctx.ratioCell({ workload: 'W13', measure: `${label(kind)} ${name} p99 at ${opts.w13Rate}/s, retention pruning every ${opts.w13PruneEveryMs / 1000} s vs off`, unit: 'ms', baseline: rounds.off.map((x) => x[what].latency.p99), svc: rounds.on.map((x) => x[what].latency.p99), max: 1.5, raw: what === 'writes' ? rounds : undefined });
    }
    // What the window holds: the rows written in the last SVC_RETENTION_*_DAYS (8.64 s) at the write rate.
    const holds = opts.w13Rate * WINDOW_S;
    const peak = (mode) => Math.max(...rounds[mode].map((x) => Math.max(x.max.delivery_jobs, x.max.delivery_attempts, x.max.events)));
    ctx.valueCell({ workload: 'W13', measure: `${label(kind)} retention on: peak rows of the largest table ÷ rows the 8.64 s window holds (${Math.round(holds)}); off reached ${peak('off')}`, unit: '×', value: peak('on') / holds, max: 3, target: '≤ 3×' });
  } finally {
    await stopSide(sides.off);
    await stopSide(sides.on);
  }
}

/** W13 (soak): claim flatness against history size, and retention's table sizes and API p99 under load. */
export async function w13(ctx, receiver, kinds) {
  if (ctx.opts.w13Parts.includes('claim')) for (const kind of kinds) await claimFlatness(ctx, kind);
  if (ctx.opts.w13Parts.includes('retention')) for (const kind of kinds) await retentionUnderLoad(ctx, kind, receiver);
}
