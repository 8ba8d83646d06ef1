// W9's readers, in a process of their own on the load core (the bench's rules: load comes from a separate process
// pinned apart from the server), not in the harness that has just seeded 100,000 records through the API. Both
// readers run here, so the API client and the raw SQL loop read under the same conditions: a warm-up of both for
// `warmupSeconds` (at least one pass each, unmeasured), then `rounds` interleaved passes, API then SQL. One JSON
// answer on stdout.
import Database from 'better-sqlite3';
import pg from 'pg';
import { Agent, request } from 'undici';

const cfg = JSON.parse(process.argv[2]);
const PAGE = cfg.page;

/**
 * The feed through the API: pages from the start until one comes back empty, each parsed into objects, on one
 * keep-alive connection. undici's `request` (the library fetch is built on) rather than fetch: fetch's
 * `Response.json()` goes through web streams and cost this client 8 ms a page of 1.4 MB here, where reading the body
 * and JSON.parse cost 3 ms; W9 measures svc's catch-up, not the client's stream machinery.
 */
async function readApi() {
  const agent = new Agent({ connections: 1 });
  const t0 = performance.now();
  let after = '';
  let count = 0;
  try {
    for (;;) {
      const res = await request(`${cfg.url}/api/v1/events?limit=${PAGE}${after ? `&after=${after}` : ''}`, { headers: { authorization: `Bearer ${cfg.token}` }, dispatcher: agent });
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
async function readSql() {
  const t0 = performance.now();
  let count = 0;
  let after = [-1, -1];
  if (cfg.kind === 'sqlite') {
    const db = new Database(cfg.dbPath, { readonly: true });
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
    const c = new pg.Client({ connectionString: cfg.databaseUrl });
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

const warmUntil = performance.now() + cfg.warmupSeconds * 1000;
let warmups = 0;
do {
  await readApi();
  await readSql();
  warmups++;
} while (performance.now() < warmUntil);
const api = [];
const raw = [];
for (let r = 0; r < cfg.rounds; r++) {
  api.push(await readApi());
  raw.push(await readSql());
  process.stderr.write(`${JSON.stringify({ round: r + 1, api: api.at(-1), raw: raw.at(-1) })}\n`);
}
process.stdout.write(`${JSON.stringify({ warmups, api, raw })}\n`);
