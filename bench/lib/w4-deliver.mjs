import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { createDb, dropDb, query } from './pg.mjs';
import { CORES, cpuSeconds, nowNs, spawnOn, stop } from './proc.mjs';
import { median } from './stats.mjs';
import { admin, seedRecords, startSvc } from './svc.mjs';

const BASELINE = fileURLToPath(new URL('../baselines/deliver-undici.mjs', import.meta.url));
const ms = (a, b) => Number(BigInt(b) - BigInt(a)) / 1e6;

/**
 * A database holding `jobs` due delivery jobs to `targets` targets (receiver ports), made through the API with
 * `serve --no-worker`; each round works on a copy (file copy on SQLite, CREATE DATABASE … TEMPLATE on PostgreSQL).
 */
export async function seedTemplate(ctx, { kind, name, targets, jobs, receiver }) {
  const dir = ctx.dir(name);
  const url = kind === 'sqlite' ? `sqlite:${join(dir, 'template.db')}` : await createDb(`${ctx.pgPrefix}_${name}_tpl`);
  // Seeding is not measured: SQLite synchronous=NORMAL, PostgreSQL synchronous_commit=off for this database only
  // (reset before any copy is made; copies never inherit it). Every measured process uses the shipped defaults.
  if (kind === 'pg') await query(url, `alter database ${ctx.pgPrefix}_${name}_tpl set synchronous_commit = off`);
  const svc = await startSvc({ mode: 'api', databaseUrl: url, tls: ctx.tls, logFile: ctx.logFile(`${name}-seed`), env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
  const hooks = [];
  try {
    const a = await admin(svc.url);
    await a.collection('bench');
    const token = await a.token();
    for (let i = 0; i < targets; i++) hooks.push((await a.webhook(receiver.urls[i], i)).id);
    const seeded = await seedRecords(svc.url, token, 'bench', Math.ceil(jobs / targets));
    ctx.progress('W4', `${name}: seeded ${seeded.count} records → ${jobs} jobs in ${seeded.seconds.toFixed(1)} s`);
  } finally {
    await svc.stop();
  }
  if (kind === 'pg') await query(url, `alter database ${ctx.pgPrefix}_${name}_tpl reset synchronous_commit`);
  const rows = (kind === 'sqlite' ? readSqlite(url.slice(7)) : await query(url, PENDING_JOBS)).map((r) => ({ ...r, body: envelope(r) }));
  if (rows.length !== Math.ceil(jobs / targets) * targets) throw new Error(`${name}: expected ${jobs} pending jobs, found ${rows.length}`);
  const jobsFile = join(dir, 'jobs.ndjson');
  writeFileSync(jobsFile, rows.map((r) => JSON.stringify([hooks.indexOf(r.webhook_id), r.id, r.body])).join('\n') + '\n');
  return { url, jobsFile, count: rows.length, dir, kind, name };
}

// The baseline posts the same bytes svc sends: the job's envelope, built from the job and its event's payload.
const PENDING_JOBS = `select j.id, j.webhook_id, j.topic, j.collection, j.record_id, e.payload
  from delivery_jobs j join events e on e.id = j.event_id where j.state = 'pending' order by j.id`;
const envelope = (r) =>
  `{"version":"1","id":${JSON.stringify(r.id)},"topic":${JSON.stringify(r.topic)},"collection":${JSON.stringify(r.collection)},"recordId":${JSON.stringify(r.record_id)},"payload":${r.payload}}`;

function readSqlite(path) {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(PENDING_JOBS).all();
  } finally {
    db.close();
  }
}

let cloneSeq = 0;
export async function cloneTemplate(ctx, tpl) {
  const n = ++cloneSeq;
  if (tpl.kind === 'sqlite') {
    const src = tpl.url.slice(7);
    const dst = join(tpl.dir, `round-${n}.db`);
    copyFileSync(src, dst);
    for (const ext of ['-wal', '-shm']) if (existsSync(src + ext)) copyFileSync(src + ext, dst + ext);
    return { url: `sqlite:${dst}`, drop: async () => {} };
  }
  const name = `${ctx.pgPrefix}_${tpl.name}_r${n}`;
  const url = await createDb(name, `${ctx.pgPrefix}_${tpl.name}_tpl`);
  return { url, drop: () => dropDb(name) };
}

/** Every drain has a time limit: past it, the rate is what was delivered so far over the time taken, marked partial. */
async function finished(done, receiver, t0) {
  try {
    return await done;
  } catch {
    const s = await receiver.stats();
    return { count: s.count, firstNs: s.firstNs ?? String(t0), lastNs: String(nowNs()), partial: true };
  }
}

/** svc: start `svc worker` processes on a fresh copy and time until the receiver has answered every job. */
export async function drainWithSvc(ctx, tpl, receiver, { processes = 1, delayMs = 0, label, prepare = null, main, env = {} }) {
  const clone = await cloneTemplate(ctx, tpl);
  // Before the clock starts: a change to the copy the drain works on (W4O turns its ordering off).
  if (prepare) await prepare(clone.url);
  const done = receiver.expect(tpl.count, { delayMs, timeoutMs: ctx.opts.drainTimeoutMs });
  const t0 = nowNs();
  const workers = [];
  try {
    // All at once: started one after another, the first would deliver alone for the others' start-up time.
    const starting = [];
    for (let i = 0; i < processes; i++) {
      starting.push(startSvc({ main, mode: 'worker', databaseUrl: clone.url, tls: ctx.tls, env, logFile: ctx.logFile(`${label}-worker${i}`), cpuProfDir: ctx.cpuProfDir }));
    }
    const started = await Promise.allSettled(starting);
    for (const s of started) if (s.status === 'fulfilled') workers.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const d = await finished(done, receiver, t0);
    const middle = d.middleNs ? { middleCount: d.middleCount, middleSeconds: Number(d.middleNs) / 1e9 } : {};
    // The workers' CPU from their spawn to the last delivery (start-up included, as in the clock).
    const cpu = workers.map((w) => cpuSeconds(w.pid));
    const cpuTotal = cpu.reduce((a, b) => a + b, 0);
    return { seconds: ms(t0, d.lastNs) / 1000, firstMs: ms(t0, d.firstNs), steadySeconds: ms(d.firstNs, d.lastNs) / 1000, count: d.count, partial: d.partial, cpuSeconds: cpuTotal, ...middle };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await clone.drop().catch(() => {});
  }
}

async function drainWithBaseline(ctx, tpl, receiver, urls) {
  const done = receiver.expect(tpl.count, { timeoutMs: ctx.opts.drainTimeoutMs });
  const t0 = nowNs();
  // With BENCH_CPU_PROF_DIR the baseline is profiled too (in a subdirectory), to compare where each spends its CPU.
  const prof = ctx.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(ctx.cpuProfDir, 'baseline')}`] : [];
  const child = spawnOn(CORES.server, [process.execPath, ...prof, BASELINE], {
    env: { BENCH_JOBS: tpl.jobsFile, BENCH_URLS: JSON.stringify(urls), BENCH_CA: ctx.tls.certFile, BENCH_PER_TARGET: '8', BENCH_GLOBAL: '64' },
    logFile: ctx.logFile('w4-baseline'),
  });
  try {
    const d = await finished(done, receiver, t0);
    // It exits by itself once every job is answered; a profile is written only on that exit, not on SIGTERM.
    if (prof.length > 0) await Promise.race([child.exitPromise, new Promise((r) => setTimeout(r, 5_000))]);
    return { seconds: ms(t0, d.lastNs) / 1000, firstMs: ms(t0, d.firstNs), count: d.count, partial: d.partial };
  } finally {
    await stop(child);
  }
}

/** W4: drain due jobs to 1 and to 10 targets; svc vs an undici client with the same connection budget. */
export async function w4(ctx, receiver) {
  const { opts } = ctx;
  for (const { kind, targets } of opts.w4Configs) {
    const name = `w4_${kind}_${targets}t`;
    const tpl = await seedTemplate(ctx, { kind, name, targets, jobs: opts.jobs, receiver });
    const urls = receiver.urls.slice(0, targets);
    const rounds = { baseline: [], svc: [] };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const side of ['baseline', 'svc']) {
        const res = side === 'svc' ? await drainWithSvc(ctx, tpl, receiver, { label: name }) : await drainWithBaseline(ctx, tpl, receiver, urls);
        res.rate = res.count / res.seconds;
        rounds[side].push(res);
        ctx.progress('W4', `${kind} ${targets} target(s) round ${r}/${opts.rounds} ${side.padEnd(8)} ${Math.round(res.rate)} deliveries/s (${res.count} in ${res.seconds.toFixed(2)} s, first after ${Math.round(res.firstMs)} ms)${res.partial ? ` — STOPPED at the ${opts.drainTimeoutMs / 1000} s limit` : ''}`);
      }
    }
    const db = kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const limited = [...rounds.svc, ...rounds.baseline].some((x) => x.partial) ? ` (some rounds stopped at the ${opts.drainTimeoutMs / 1000} s limit)` : '';
    ctx.ratioCell({ workload: 'W4', measure: `drain ${tpl.count} jobs, ${targets} target${targets > 1 ? 's' : ''}, ${db}, deliveries/s${limited}`, unit: '/s', baseline: rounds.baseline.map((x) => x.rate), svc: rounds.svc.map((x) => x.rate), min: 0.5, raw: rounds });
    ctx.shared[name] = { svcRate: median(rounds.svc.map((x) => x.rate)) };
  }
}

/** W7: PostgreSQL, receiver answering after 50 ms, 1 → 2 → 4 `svc worker` processes; steady rate first → last delivery. */
export async function w7(ctx, receiver) {
  const { opts } = ctx;
  const tpl = await seedTemplate(ctx, { kind: 'pg', name: 'w7', targets: 1, jobs: opts.w7Jobs, receiver });
  const counts = [1, 2, 4];
  const rates = Object.fromEntries(counts.map((n) => [n, []]));
  const raw = [];
  for (let r = 1; r <= opts.rounds; r++) {
    for (const n of counts) {
      const res = await drainWithSvc(ctx, tpl, receiver, { processes: n, delayMs: 50, label: `w7-${n}` });
      // The steady rate: deliveries 10 % → 90 % of the way through. Processes started together still come up one after
      // another on two cores, and the last jobs drain at a falling rate; neither is claim contention, which W7 measures.
      res.rate = res.middleSeconds ? res.middleCount / res.middleSeconds : res.count / res.steadySeconds;
      rates[n].push(res.rate);
      raw.push({ round: r, processes: n, ...res });
      ctx.progress('W7', `round ${r}/${opts.rounds} ${n} worker process(es): ${Math.round(res.rate)} deliveries/s (10 %→90 % of ${res.count} in ${(res.middleSeconds ?? res.steadySeconds).toFixed(2)} s; first→last ${res.steadySeconds.toFixed(2)} s)${res.partial ? ` — STOPPED at the ${opts.drainTimeoutMs / 1000} s limit` : ''}`);
    }
  }
  const scale = (n) => rates[n].map((x, i) => x / rates[1][i]);
  ctx.valueCell({ workload: 'W7', measure: '1 worker process (receiver +50 ms, 1 target), deliveries/s', unit: '/s', rounds: rates[1], value: median(rates[1]), target: '—', raw });
  ctx.valueCell({ workload: 'W7', measure: '2 processes vs 1 (scale-out)', unit: '×', rounds: scale(2), value: median(scale(2)), min: 1.8, target: '≥ 1.8×' });
  ctx.valueCell({ workload: 'W7', measure: '4 processes vs 1 (scale-out)', unit: '×', rounds: scale(4), value: median(scale(4)), min: 3.4, target: '≥ 3.4×' });
}
