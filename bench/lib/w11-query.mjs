import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { newId } from '../baselines/common.mjs';
import { W11_COLLECTION, W11_FILTER } from '../baselines/query-common.mjs';
import { load } from './load.mjs';
import { createDb } from './pg.mjs';
import { CORES, freePort, spawnOn, stop, waitHttp, withCpu } from './proc.mjs';
import { admin, recordData, startSvc } from './svc.mjs';

const pct = (x) => `${Math.round(x * 100)}%`;
const BASELINES = {
  sqlite: fileURLToPath(new URL('../baselines/query-sqlite.mjs', import.meta.url)),
  pg: fileURLToPath(new URL('../baselines/query-pg.mjs', import.meta.url)),
};
const STATUSES = ['open', 'closed', 'waiting', 'done'];
const FIELDS = [
  { name: 'title', type: 'text', required: true },
  { name: 'body', type: 'text' },
  { name: 'n', type: 'integer' },
  { name: 'status', type: 'text', indexed: true },
  { name: 'priority', type: 'integer', indexed: true },
];

/** Record i: ~1 KB, a status of four and a priority of six (1 in 8 records matches W11's filter). */
function row(i, now) {
  const data = { ...recordData(i), status: STATUSES[i % 4], priority: Math.floor(i / 4) % 6 };
  return { id: newId('rec', now + i), collection: W11_COLLECTION, version: 1, data: JSON.stringify(data), created_at: now + i, updated_at: now + i };
}

/**
 * The schema, collection (with its indexes, built by svc) and token come from svc itself; the rows are written
 * straight into the table (seeding 100,000 records through the API would take longer than the measurement).
 */
export async function seed(ctx, kind, databaseUrl, count) {
  const seeder = await startSvc({ mode: 'api', databaseUrl, tls: ctx.tls, logFile: ctx.logFile(`w11-${kind}-seed`) });
  let token;
  try {
    const a = await admin(seeder.url);
    await a.collectionWith(W11_COLLECTION, FIELDS);
    token = await a.token();
  } finally {
    await seeder.stop();
  }
  const now = Date.now() - count;
  const t0 = performance.now();
  if (kind === 'sqlite') {
    const db = new Database(databaseUrl.slice('sqlite:'.length));
    const insert = db.prepare('insert into records (id, collection, version, data, created_at, updated_at) values (@id, @collection, @version, @data, @created_at, @updated_at)');
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(row(i, now));
    })();
    db.exec('analyze');
    db.close();
  } else {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      for (let start = 0; start < count; start += 1000) {
        const rows = Array.from({ length: Math.min(1000, count - start) }, (_, k) => row(start + k, now));
        const values = rows.map((_, k) => `($${k * 6 + 1}, $${k * 6 + 2}, $${k * 6 + 3}, $${k * 6 + 4}, $${k * 6 + 5}, $${k * 6 + 6})`).join(',');
        await c.query(`insert into records (id, collection, version, data, created_at, updated_at) values ${values}`, rows.flatMap((r) => [r.id, r.collection, r.version, r.data, r.created_at, r.updated_at]));
      }
      await c.query('vacuum analyze records');
    } finally {
      await c.end();
    }
  }
  ctx.progress('W11', `${kind}: seeded ${count} records in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return token;
}

/**
 * W11: a filtered, sorted page on indexed fields, `filter=status = 'open' && priority >= 3&sort=-priority&limit=50`,
 * over `opts.w11Records` records of ~1 KB, 64 connections; svc against node:http running the same SQL with the same
 * indexes on the same database, on SQLite and on PostgreSQL.
 */
export async function w11(ctx, kinds) {
  const { opts } = ctx;
  for (const kind of kinds) {
    const databaseUrl = kind === 'sqlite' ? `sqlite:${join(ctx.dir('w11'), 'svc.db')}` : await createDb(`${ctx.pgPrefix}_w11`);
    const token = await seed(ctx, kind, databaseUrl, opts.w11Records);
    const svc = await startSvc({ mode: 'api', databaseUrl, tls: ctx.tls, logFile: ctx.logFile(`w11-${kind}-svc`) });
    let baseline = null;
    try {
      const port = await freePort();
      const env = kind === 'sqlite' ? { BENCH_DB: databaseUrl.slice('sqlite:'.length) } : { BENCH_DB_URL: databaseUrl };
      baseline = spawnOn(CORES.server, [process.execPath, BASELINES[kind]], { env: { ...env, BENCH_PORT: String(port) }, logFile: ctx.logFile(`w11-${kind}-baseline`) });
      const baseUrl = `http://127.0.0.1:${port}`;
      await waitHttp(`${baseUrl}/readyz`, { child: baseline });
      const path = `/api/v1/collections/${W11_COLLECTION}/records?filter=${encodeURIComponent(W11_FILTER)}&sort=-priority&limit=50`;
      const check = await (await fetch(svc.url + path, { headers: { authorization: `Bearer ${token}` } })).json();
      if (!Array.isArray(check.items) || check.items.length !== Math.min(50, Math.floor(opts.w11Records / 8))) throw new Error(`W11 ${kind}: unexpected answer ${JSON.stringify(check).slice(0, 300)}`);
      const target = (url, duration) => ({ url: url + path, headers: { authorization: `Bearer ${token}` }, connections: opts.connections, duration });
      ctx.progress('W11', `${kind}: warm-up ${opts.warmup} s per server`);
      for (const url of [baseUrl, svc.url]) await load(target(url, opts.warmup));
      const rounds = { baseline: [], svc: [] };
      for (let r = 1; r <= opts.rounds; r++) {
        for (const side of ['baseline', 'svc']) {
          const pid = side === 'svc' ? svc.pid : baseline.pid;
          const { result: res, cpu } = await withCpu(pid, () => load(target(side === 'svc' ? svc.url : baseUrl, opts.duration)));
          res.serverCpu = cpu;
          rounds[side].push(res);
          ctx.progress('W11', `${kind} round ${r}/${opts.rounds} ${side.padEnd(8)} ${Math.round(res.rps)} req/s  p99 ${res.latency.p99} ms  (server CPU ${pct(cpu)})${res.warning ? '  ! ' + res.warning : ''}`);
        }
      }
      const label = `${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'} filter+sort on indexed fields`;
      ctx.ratioCell({ workload: 'W11', measure: `${label}, req/s`, unit: 'req/s', baseline: rounds.baseline.map((x) => x.rps), svc: rounds.svc.map((x) => x.rps), min: 0.6, raw: rounds });
      ctx.ratioCell({ workload: 'W11', measure: `${label}, p99 latency`, unit: 'ms', baseline: rounds.baseline.map((x) => x.latency.p99), svc: rounds.svc.map((x) => x.latency.p99), max: 1.5, lowerIsBetter: true });
    } finally {
      await stop(baseline);
      await svc.stop();
    }
  }
}
