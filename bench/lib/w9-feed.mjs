import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Agent, request } from 'undici';
import { createDb } from './pg.mjs';
import { admin, seedRecords, startSvc } from './svc.mjs';

const PAGE = 1000;

/**
 * The feed through the API: pages of 1,000 from the start until one comes back empty, each parsed into objects, on
 * one keep-alive connection. undici's `request` (the library fetch is built on) rather than fetch: fetch's
 * `Response.json()` goes through web streams and cost this client 8 ms a page of 1.4 MB here, where reading the body
 * and JSON.parse cost 3 ms; W9 measures svc's catch-up, not the client's stream machinery.
 */
async function readApi(url, token) {
  const agent = new Agent({ connections: 1 });
  const t0 = performance.now();
  let after = '';
  let count = 0;
  try {
    for (;;) {
      const res = await request(`${url}/api/v1/events?limit=${PAGE}${after ? `&after=${after}` : ''}`, { headers: { authorization: `Bearer ${token}` }, dispatcher: agent });
      const page = JSON.parse(await res.body.text());
      if (res.statusCode !== 200) throw new Error(`feed: ${res.statusCode} ${JSON.stringify(page).slice(0, 200)}`);
      count += page.items.length;
      if (page.items.length === 0) break;
      after = page.nextCursor;
    }
  } finally {
    await agent.close();
  }
  return { count, seconds: (performance.now() - t0) / 1000 };
}

const SQL = (p) => `select id, topic, collection, record_id, created_at, payload, tx, position from events
  where position is not null and (tx, position) > (${p(1)}, ${p(2)}) order by tx, position limit ${PAGE}`;

/** The same rows with a plain keyset loop on the same database, no HTTP, no JSON: the floor the API is compared with. */
async function readSql(kind, databaseUrl, dbPath) {
  const t0 = performance.now();
  let count = 0;
  let after = [-1, -1];
  if (kind === 'sqlite') {
    const db = new Database(dbPath, { readonly: true });
    const stmt = db.prepare(SQL(() => '?'));
    for (;;) {
      const rows = stmt.all(...after);
      if (rows.length === 0) break;
      count += rows.length;
      const last = rows[rows.length - 1];
      after = [last.tx, last.position];
    }
    db.close();
  } else {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    for (;;) {
      const { rows } = await c.query(SQL((i) => `$${i}`), after);
      if (rows.length === 0) break;
      count += rows.length;
      const last = rows[rows.length - 1];
      after = [last.tx, last.position];
    }
    await c.end();
  }
  return { count, seconds: (performance.now() - t0) / 1000 };
}

/** W9: catch up on the feed (opts.feedEvents events, pages of 1,000) through the API vs a raw SQL loop; both dialects. */
export async function w9(ctx, kinds) {
  const { opts } = ctx;
  for (const kind of kinds) {
    const dir = ctx.dir(`w9-${kind}`);
    const dbPath = join(dir, 'svc.db');
    const databaseUrl = kind === 'sqlite' ? `sqlite:${dbPath}` : await createDb(`${ctx.pgPrefix}_w9`);
    const svc = await startSvc({ mode: 'api', databaseUrl, tls: ctx.tls, logFile: ctx.logFile(`w9-${kind}`), env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
    try {
      const a = await admin(svc.url);
      await a.collection('bench');
      const writer = await a.token();
      const reader = await a.token(['events:read']);
      ctx.progress('W9', `${kind}: seeding ${opts.feedEvents} events through the API`);
      const seeded = await seedRecords(svc.url, writer, 'bench', opts.feedEvents);
      ctx.progress('W9', `${kind}: seeded in ${seeded.seconds.toFixed(1)} s`);
      const api = [];
      const raw = [];
      for (let r = 1; r <= opts.rounds; r++) {
        const x = await readApi(svc.url, reader);
        const y = await readSql(kind, databaseUrl, dbPath);
        if (x.count !== opts.feedEvents || y.count !== opts.feedEvents) throw new Error(`read ${x.count} (API) and ${y.count} (SQL) of ${opts.feedEvents} events`);
        api.push(x.count / x.seconds);
        raw.push(y.count / y.seconds);
        ctx.progress('W9', `${kind} round ${r}/${opts.rounds}: API ${Math.round(api.at(-1))} events/s, raw SQL ${Math.round(raw.at(-1))} events/s`);
      }
      ctx.ratioCell({ workload: 'W9', measure: `feed catch-up ${kind}, events/s (pages of ${PAGE})`, unit: '/s', baseline: raw, svc: api, min: 0.6 });
    } finally {
      await svc.stop();
    }
  }
}
