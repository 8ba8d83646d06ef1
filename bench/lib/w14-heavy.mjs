import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Pool } from 'undici';
import { newId } from '../baselines/common.mjs';
import { createDb } from './pg.mjs';
import { rssSampler } from './proc.mjs';
import { percentile } from './stats.mjs';
import { admin, startSvc } from './svc.mjs';

const label = (kind) => (kind === 'sqlite' ? 'SQLite' : 'PostgreSQL');
/** The review's query: 50 `~` terms, none matching, so every term reads every record's 50 KB body. */
const TERMS = Array.from({ length: 50 }, (_, i) => `body ~ "needle-${i}-absent"`).join(' || ');
const BIG_BODY = 'Lorem ipsum DOLOR sit amet ÀÉÎ '.repeat(1600);

async function insertRows(kind, databaseUrl, rows) {
  if (kind === 'sqlite') {
    const db = new Database(databaseUrl.slice('sqlite:'.length));
    const insert = db.prepare('insert into records (id, collection, version, data, created_at, updated_at) values (@id, @collection, @version, @data, @created_at, @updated_at)');
    db.transaction(() => rows.forEach((r) => insert.run(r)))();
    db.close();
    return;
  }
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    for (const r of rows) {
      await c.query('insert into records (id, collection, version, data, created_at, updated_at) values ($1, $2, $3, $4, $5, $6)', [r.id, r.collection, r.version, r.data, r.created_at, r.updated_at]);
    }
  } finally {
    await c.end();
  }
}

/** Times GET /healthz every 20 ms until `until` settles: every latency, in ms. */
async function probeHealthz(url, until) {
  let done = false;
  void until.finally(() => (done = true));
  const latencies = [];
  while (!done) {
    const t = performance.now();
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    latencies.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  return latencies.sort((a, b) => a - b);
}

/** Part 1: /healthz while two clients run the 50-term `~` list over 200 records of 50 KB back to back. */
async function heavyList(ctx, kind) {
  const { opts } = ctx;
  const databaseUrl = kind === 'sqlite' ? `sqlite:${join(ctx.dir(`w14-${kind}`), 'svc.db')}` : await createDb(`${ctx.pgPrefix}_w14`);
  const seeder = await startSvc({ mode: 'api', databaseUrl, tls: ctx.tls, logFile: ctx.logFile(`w14-${kind}-seed`) });
  let token;
  try {
    const a = await admin(seeder.url);
    await a.collectionWith('docs', [{ name: 'body', type: 'text', required: false }]);
    token = await a.token(['records:read']);
  } finally {
    await seeder.stop();
  }
  const now = Date.now();
  await insertRows(kind, databaseUrl, Array.from({ length: 200 }, (_, i) => ({ id: newId('rec', now + i), collection: 'docs', version: 1, data: JSON.stringify({ body: BIG_BODY }), created_at: now, updated_at: now })));
  const svc = await startSvc({ mode: 'api', databaseUrl, tls: ctx.tls, logFile: ctx.logFile(`w14-${kind}-svc`) });
  try {
    const quiet = await probeHealthz(svc.url, new Promise((r) => setTimeout(r, 2_000)));
    const path = `/api/v1/collections/docs/records?filter=${encodeURIComponent(TERMS)}`;
    const answers = { 200: 0, 503: 0, other: 0 };
    const deadline = performance.now() + opts.duration * 1000;
    const client = async () => {
      while (performance.now() < deadline) {
        const res = await fetch(svc.url + path, { headers: { authorization: `Bearer ${token}` } });
        await res.arrayBuffer();
        answers[res.status === 200 || res.status === 503 ? res.status : 'other']++;
      }
    };
    const busy = Promise.all([client(), client()]);
    const during = await probeHealthz(svc.url, busy);
    await busy;
    ctx.progress('W14', `${kind}: heavy lists answered ${answers[200]} × 200, ${answers[503]} × 503 query_timeout, ${answers.other} other; /healthz p50 ${percentile(during, 50).toFixed(1)} ms, p99 ${percentile(during, 99).toFixed(1)} ms, max ${during.at(-1).toFixed(1)} ms over ${during.length} probes (quiet p99 ${percentile(quiet, 99).toFixed(1)} ms)`);
    ctx.valueCell({ workload: 'W14', measure: `${label(kind)}: /healthz p99 while 50-term ~ lists over 200 × 50 KB run`, unit: 'ms', value: percentile(during, 99), max: 250, target: '≤ 250 ms', raw: { during, quiet, answers } });
    ctx.valueCell({ workload: 'W14', measure: `${label(kind)}: /healthz p99 with nothing else running (same run)`, unit: 'ms', value: percentile(quiet, 99) });
  } finally {
    await svc.stop();
  }
}

/** Part 2: four clients page through update events of ~2 MB (a 1 MiB record and its previous state) again and again. */
async function bigEvents(ctx, kind) {
  const { opts } = ctx;
  const databaseUrl = kind === 'sqlite' ? `sqlite:${join(ctx.dir(`w14-events-${kind}`), 'svc.db')}` : await createDb(`${ctx.pgPrefix}_w14e`);
  const svc = await startSvc({ mode: 'api', databaseUrl, tls: ctx.tls, logFile: ctx.logFile(`w14-events-${kind}-svc`) });
  try {
    const a = await admin(svc.url);
    await a.collectionWith('big', [{ name: 'body', type: 'text', required: false }]);
    const token = await a.token(['records:read', 'records:write', 'events:read']);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // The largest body svc takes is 1 MiB: data of ~1,000,000 characters fits with its envelope.
    const text = (n) => `${n}`.padEnd(1_000_000, n % 2 ? 'x' : 'y');
    const records = 16;
    for (let i = 0; i < records; i++) {
      const made = await fetch(`${svc.url}/api/v1/collections/big/records`, { method: 'POST', headers, body: JSON.stringify({ data: { body: text(i) } }) });
      if (made.status !== 201) throw new Error(`W14: create answered ${made.status}: ${(await made.text()).slice(0, 300)}`);
      const { id } = await made.json();
      const changed = await fetch(`${svc.url}/api/v1/collections/big/records/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ data: { body: text(i + 1) } }) });
      if (changed.status !== 200) throw new Error(`W14: update answered ${changed.status}: ${(await changed.text()).slice(0, 300)}`);
    }
    const pool = new Pool(svc.url, { connections: 4 });
    const sampler = rssSampler(svc.pid, 50);
    const deadline = performance.now() + opts.duration * 1000;
    let pages = 0;
    let events = 0;
    const client = async () => {
      while (performance.now() < deadline) {
        let after = null;
        for (;;) {
          const res = await pool.request({ path: `/api/v1/events?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`, method: 'GET', headers: { authorization: `Bearer ${token}` } });
          const body = await res.body.json();
          if (res.statusCode !== 200) throw new Error(`W14: events page answered ${res.statusCode}: ${JSON.stringify(body).slice(0, 300)}`);
          pages++;
          events += body.items.length;
          if (body.items.length === 0) break;
          after = body.nextCursor;
        }
      }
    };
    await Promise.all([client(), client(), client(), client()]);
    const { peakMb } = sampler.stop();
    await pool.close();
    ctx.progress('W14', `${kind}: four clients read ${events} events of up to ~2 MB in ${pages} pages; svc RSS peak ${Math.round(peakMb)} MB`);
    ctx.valueCell({ workload: 'W14', measure: `${label(kind)}: RSS peak, four clients paging through 2 MB events`, unit: 'MB', value: peakMb, max: 512, target: '≤ 512 MB', raw: { pages, events } });
  } finally {
    await svc.stop();
  }
}

/**
 * W14 "heavy" (SPEC §12): the process keeps answering beside the heaviest read a token may send, and stays within its
 * memory while events of the largest size are paged through.
 */
export async function w14(ctx, kinds) {
  for (const kind of kinds) {
    await heavyList(ctx, kind);
    await bigEvents(ctx, kind);
  }
}
