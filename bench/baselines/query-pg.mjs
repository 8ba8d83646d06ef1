// W11 baseline (PostgreSQL): raw node:http + pg on svc's database, with svc's indexes, a pool as large as svc's (10).
// Per request: the token lookup, then one query with the filter and sort svc compiles, the list JSON as text.
import http from 'node:http';
import pg from 'pg';
import { bearer, recordListJson, send, sha256Hex } from './common.mjs';
import { PG_QUERY, W11_COLLECTION, keysetCursor } from './query-common.mjs';

const { BENCH_DB_URL, BENCH_PORT } = process.env;
pg.types.setTypeParser(20, (v) => Number(v));
const pool = new pg.Pool({ connectionString: BENCH_DB_URL, max: 10 });
pool.on('error', () => {});
const PATH = `/api/v1/collections/${W11_COLLECTION}/records`;

const server = http.createServer(async (req, res) => {
  try {
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    if (path === '/readyz') return send(res, 200, '{"status":"ok"}');
    if (path !== PATH || req.method !== 'GET') return send(res, 404, '{"code":"not_found"}');
    const presented = bearer(req.headers.authorization);
    const token = presented ? (await pool.query('select id, scopes, collections from api_tokens where token_hash = $1', [sha256Hex(presented)])).rows[0] : undefined;
    if (!token) return send(res, 401, '{"code":"unauthorized"}');
    const limit = Number(new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1)).get('limit') ?? 50);
    const rows = (await pool.query(PG_QUERY, ['open', 3, limit + 1])).rows;
    const items = rows.length > limit ? rows.slice(0, limit) : rows;
    send(res, 200, recordListJson(items, rows.length > limit ? keysetCursor(items.at(-1)) : null));
  } catch (err) {
    send(res, 500, JSON.stringify({ code: 'internal', detail: String(err) }));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(BENCH_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))) && server.closeAllConnections());
