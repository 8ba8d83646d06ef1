// Instructions a unit of work costs, counted by valgrind's callgrind: W1's request (svc serve against the raw
// node:http baseline) and W4's delivery (svc worker against the raw undici loop). On a machine whose speed moves by 2×
// within minutes (bench/README), a change of 2-5 % of CPU cannot be seen in rates or CPU seconds; the count of
// instructions of the same work moves by under 1 % between runs. Not a benchmark of speed (cache misses, syscalls'
// wait and the JIT under valgrind are not what they are natively): a measure of a change's share of the work.
//
//   node bench/instructions.mjs w1 [--main A/svc.mjs --main B/svc.mjs] [--limit 5] [--requests 2000]
//   node bench/instructions.mjs w4 [--main …] [--jobs 3000]
//   node bench/instructions.mjs w11 [--main …] [--records 100000] [--warmup 500] [--requests 500]
//   node bench/instructions.mjs w2 [--main …] [--requests 2000]
//
// W1: the process is warmed with --warmup requests, its counters zeroed (callgrind_control -z), --requests requests
// made (8 connections), then dumped. W4: two drains of different sizes, the same template copied for each; the
// difference of their totals over the difference of their jobs is a delivery's count without start-up and warm-up.
// W11: as W1, W11's filtered, sorted page (`limit=50`) over --records records (svc serve --no-worker, its reader
// threads counted with it) against baselines/query-sqlite.mjs; a page costs ~5× W1's, so fewer requests do.
// W2: as W1, W2's create (~1 KB of data, one subscribed target, `svc serve --no-worker`, SQLite `FULL`) against
// baselines/create-sqlite.mjs on a database of its own, both starting empty; the commits' waits are not instructions.
// Both run every --main given, then the baseline, and print instructions a unit and the ratio baseline ÷ svc.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort } from './lib/proc.mjs';
import { startReceiver } from './lib/receiver.mjs';
import { ADMIN, SECRET_KEY, SVC_MAIN, admin, recordData, seedRecords, startSvc, svcNodeFlags } from './lib/svc.mjs';
import { makeTls } from './lib/tls.mjs';
import { seedTemplate } from './lib/w4-deliver.mjs';
import { seed as seedW11 } from './lib/w11-query.mjs';
import { W11_COLLECTION, W11_FILTER } from './baselines/query-common.mjs';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    main: { type: 'string', multiple: true },
    limit: { type: 'string', default: '5' },
    requests: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '3000' },
    jobs: { type: 'string', default: '3000' },
    targets: { type: 'string', default: '1' },
    records: { type: 'string', default: '100000' },
    objects: { type: 'boolean', default: false },
    functions: { type: 'boolean', default: false },
  },
});
const workload = positionals[0];
if (!['w1', 'w2', 'w4', 'w11'].includes(workload)) {
  console.error('usage: node bench/instructions.mjs w1|w2|w4|w11 [--main path/to/svc.mjs …] [--limit N] [--requests N] [--jobs N] [--targets N] [--records N]');
  process.exit(2);
}
const mains = (args.main ?? [SVC_MAIN]).map((m) => resolve(m));
const BASELINES = fileURLToPath(new URL('./baselines/', import.meta.url));
const tmp = mkdtempSync(join(os.tmpdir(), 'svc-instructions-'));
const dir = (name) => {
  const d = join(tmp, name);
  mkdirSync(d, { recursive: true });
  return d;
};

/** A process under callgrind: its counters can be zeroed and dumped; `total()` reads the last dump of the main process. */
function underCallgrind(name, argv, env) {
  const out = dir(`cg-${name}`);
  const child = spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${out}/cg.%p`, process.execPath, ...argv], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise((r) => child.on('exit', r));
  return {
    child,
    exited,
    zero: () => execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' }),
    dump: () => execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' }),
    /** The dumps (or the final profile) of the process, the newest last: their instructions, and by object with --objects. */
    dumps() {
      return readdirSync(out)
        .filter((f) => f.startsWith(`cg.${child.pid}`))
        .sort((a, b) => (a === `cg.${child.pid}` ? 1 : b === `cg.${child.pid}` ? -1 : a.localeCompare(b, 'en', { numeric: true })))
        .map((f) => readFileSync(join(out, f), 'utf8'))
        .filter((t) => /^(summary|totals):/m.test(t))
        .map((t) => ({
          total: Number(/^(?:summary|totals):\s+(\d+)/m.exec(t)[1]),
          objects: args.objects ? selfCosts(t, 'ob') : null,
          functions: args.functions ? selfCosts(t, 'fn') : null,
        }));
    },
    stderr: () => stderr,
  };
}

/**
 * A callgrind profile's own instructions by ELF object (`ob`: the node binary, better-sqlite3's addon with SQLite,
 * libc, …; JIT-compiled JavaScript has none, and counts as `???`) or by function (`fn`: V8's builtins and runtime
 * functions by name, JIT code as `???`): each function's self cost, a call's inclusive cost skipped.
 */
function selfCosts(text, key) {
  const names = new Map();
  const sums = new Map();
  let current = '???';
  let skip = false;
  const define = (line, prefix) => {
    const m = new RegExp(`^${prefix}=\\((\\d+)\\)(?: (.*))?$`).exec(line);
    if (!m) return line.slice(prefix.length + 1);
    if (m[2] !== undefined) names.set(m[1], m[2]);
    return names.get(m[1]) ?? m[1];
  };
  for (const line of text.split('\n')) {
    if (line.startsWith(`${key}=`)) current = define(line, key);
    else if (line.startsWith(`c${key}=`)) define(line, `c${key}`);
    else if (line.startsWith('calls=')) skip = true;
    else if (/^[+\-*0-9]/.test(line)) {
      if (skip) skip = false;
      else {
        const parts = line.trim().split(/\s+/);
        sums.set(current, (sums.get(current) ?? 0) + Number(parts[parts.length - 1]));
      }
    }
  }
  return sums;
}

const objectLines = (objects, units, top = 8) =>
  [...objects]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `    ${String(Math.round(n / units)).padStart(9)}  ${name.replace(/.*\//, '')}`)
    .join('\n');

async function waitHttp(url, proc) {
  for (let i = 0; i < 1200; i++) {
    if (proc.child.exitCode !== null) throw new Error(`exited before answering ${url}: ${proc.stderr()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no answer from ${url}`);
}

const requests = (url, token, amount, post = null) =>
  autocannon({ url, headers: { authorization: `Bearer ${token}`, ...(post ? { 'content-type': 'application/json' } : {}) }, method: post ? 'POST' : 'GET', body: post ?? undefined, connections: 8, amount, timeout: 120 }).then((r) => {
    if (r['2xx'] !== amount) throw new Error(`${url}: ${r['2xx']} of ${amount} answered 2xx`);
  });

async function w1() {
  const dbPath = join(dir('w1'), 'svc.db');
  const seeder = await startSvc({ mode: 'api', databaseUrl: `sqlite:${dbPath}`, env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
  const a = await admin(seeder.url);
  await a.collection('bench');
  const token = await a.token();
  await seedRecords(seeder.url, token, 'bench', 2000);
  await seeder.stop();
  await perRequest('W1', `limit=${args.limit}`, dbPath, token, `/api/v1/collections/bench/records?limit=${args.limit}`, 'list-sqlite.mjs', {});
}

async function w11() {
  const dbPath = join(dir('w11'), 'svc.db');
  const ctx = { tls: null, logFile: () => null, progress: (_w, m) => console.log(m) };
  const token = await seedW11(ctx, 'sqlite', `sqlite:${dbPath}`, Number(args.records));
  const path = `/api/v1/collections/${W11_COLLECTION}/records?filter=${encodeURIComponent(W11_FILTER)}&sort=-priority&limit=50`;
  // Under valgrind a page queued behind seven others outlasted the default query timeout (10 s): 503s.
  await perRequest('W11', `${args.records} records`, dbPath, token, path, 'query-sqlite.mjs', { SVC_QUERY_TIMEOUT_MS: '600000' });
}

/** Instructions a request of `path`, of each --main and of the baseline on the same database, and their ratios. */
async function perRequest(workload, label, dbPath, token, path, baseline, svcEnv, { post = null, baseEnv = { BENCH_DB: dbPath } } = {}) {
  const n = Number(args.requests);
  const one = async (name, argv, env, port) => {
    const p = underCallgrind(name, argv, env);
    try {
      await waitHttp(`http://127.0.0.1:${port}/readyz`, p);
      await requests(`http://127.0.0.1:${port}${path}`, token, Number(args.warmup), post);
      p.zero();
      await requests(`http://127.0.0.1:${port}${path}`, token, n, post);
      p.dump();
      const [d] = p.dumps();
      if (d.objects) console.log(`  ${name}, instructions a request by object:\n${objectLines(d.objects, n)}`);
      if (d.functions) console.log(`  ${name}, instructions a request by function:\n${objectLines(d.functions, n, 60)}`);
      return d.total / n;
    } finally {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  };
  const rows = [];
  for (const [i, main] of mains.entries()) {
    const port = await freePort();
    const env = { SVC_DATABASE_URL: `sqlite:${dbPath}`, SVC_HOST: '127.0.0.1', SVC_PORT: String(port), SVC_SECRET_KEY: SECRET_KEY, SVC_ADMIN_EMAIL: ADMIN.email, SVC_ADMIN_PASSWORD: ADMIN.password, ...svcEnv };
    rows.push([main, await one(`svc${i}`, [...svcNodeFlags(main), main, 'serve', '--no-worker'], env, port)]);
    console.log(`svc ${main}: ${Math.round(rows.at(-1)[1])} instructions a request`);
  }
  const port = await freePort();
  const raw = await one('raw', [join(BASELINES, baseline)], { ...baseEnv, BENCH_PORT: String(port) }, port);
  console.log(`raw node:http + better-sqlite3: ${Math.round(raw)} instructions a request`);
  for (const [main, count] of rows) console.log(`${workload} ${label}, ${main}: baseline ÷ svc ${(raw / count).toFixed(3)} (instructions)`);
}

async function w2() {
  const svcDb = join(dir('w2'), 'svc.db');
  const baseDb = join(dir('w2'), 'baseline.db');
  const seeder = await startSvc({ mode: 'api', databaseUrl: `sqlite:${svcDb}` });
  const a = await admin(seeder.url);
  await a.collection('bench');
  const token = await a.token();
  await a.webhook('https://127.0.0.1:9/hook');
  await seeder.stop();
  execFileSync(process.execPath, [SVC_MAIN, 'migrate'], { env: { ...process.env, SVC_DATABASE_URL: `sqlite:${baseDb}`, SVC_SECRET_KEY: SECRET_KEY }, stdio: 'ignore' });
  const baseEnv = { BENCH_DB: baseDb, BENCH_TOKEN: token, BENCH_TARGET_URL: 'https://127.0.0.1:9/hook', BENCH_SYNCHRONOUS: 'FULL' };
  await perRequest('W2', 'create', svcDb, token, '/api/v1/collections/bench/records', 'create-sqlite.mjs', {}, { post: JSON.stringify({ data: recordData(1) }), baseEnv });
}

async function w4() {
  const ctx = { opts: { drainTimeoutMs: 600_000 }, tls: null, pgPrefix: `svc_instr_${process.pid}`, progress: (_w, m) => console.log(m), dir, logFile: () => null };
  ctx.tls = await makeTls(dir('tls'));
  const receiver = await startReceiver({ ports: Number(args.targets), tls: ctx.tls, logFile: null });
  try {
    const big = Number(args.jobs);
    const small = Math.floor(big / 3);
    const templates = {};
    for (const jobs of [small, big]) templates[jobs] = await seedTemplate(ctx, { kind: 'sqlite', name: `w4-${jobs}`, targets: Number(args.targets), jobs, receiver });
    const drain = async (name, jobs, argv, env) => {
      const done = receiver.expect(templates[jobs].count, { timeoutMs: 900_000 });
      const p = underCallgrind(name, argv, env);
      try {
        await done;
      } finally {
        // SIGTERM: the worker stops cleanly and callgrind writes its profile as the process exits.
        p.child.kill('SIGTERM');
        await p.exited;
      }
      return p.dumps().at(-1);
    };
    const perJob = async (name, argvFor, envFor) => {
      const counts = [];
      for (const jobs of [small, big]) {
        const db = join(dir(`${name}-${jobs}`), 'svc.db');
        copyFileSync(templates[jobs].url.slice('sqlite:'.length), db);
        counts.push(await drain(`${name}-${jobs}`, jobs, argvFor(db, jobs), envFor(db, jobs)));
      }
      const units = templates[big].count - templates[small].count;
      if (counts[1].objects) {
        const diff = new Map([...counts[1].objects].map(([k, v]) => [k, v - (counts[0].objects.get(k) ?? 0)]));
        console.log(`  ${name}, instructions a delivery by object:\n${objectLines(diff, units)}`);
      }
      if (counts[1].functions) {
        const diff = new Map([...counts[1].functions].map(([k, v]) => [k, v - (counts[0].functions.get(k) ?? 0)]));
        console.log(`  ${name}, instructions a delivery by function:\n${objectLines(diff, units, 60)}`);
      }
      return (counts[1].total - counts[0].total) / units;
    };
    const rows = [];
    for (const [i, main] of mains.entries()) {
      const count = await perJob(
        `svc${i}`,
        () => [...svcNodeFlags(main), main, 'worker'],
        (db) => ({ SVC_DATABASE_URL: `sqlite:${db}`, SVC_SECRET_KEY: SECRET_KEY, SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_CA_FILE: ctx.tls.certFile }),
      );
      rows.push([main, count]);
      console.log(`svc ${main}: ${Math.round(count)} instructions a delivery`);
    }
    const raw = await perJob(
      'raw',
      () => [join(BASELINES, 'deliver-undici.mjs')],
      (_db, jobs) => ({ BENCH_JOBS: templates[jobs].jobsFile, BENCH_URLS: JSON.stringify(receiver.urls.slice(0, Number(args.targets))), BENCH_CA: ctx.tls.certFile, BENCH_PER_TARGET: '8', BENCH_GLOBAL: '64' }),
    );
    console.log(`raw undici loop: ${Math.round(raw)} instructions a delivery`);
    for (const [main, count] of rows) console.log(`W4 SQLite ${args.targets} target(s), ${main}: baseline ÷ svc ${(raw / count).toFixed(3)} (instructions)`);
  } finally {
    await receiver.close?.();
  }
}

try {
  await ({ w1, w2, w4, w11 })[workload]();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
