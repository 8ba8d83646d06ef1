// W11 baseline (SQLite): raw node:http + better-sqlite3 on svc's own database file, with svc's indexes. Per request:
// the token lookup, then one query with the filter and sort svc compiles (limit + 1 rows), the list JSON as text.
import http from 'node:http';
import { bearer, recordListJson, send, sha256Hex } from './common.mjs';
import { openDatabase, tokenQuery } from './sqlite-db.mjs';
import { SQLITE_QUERY, W11_COLLECTION, keysetCursor } from './query-common.mjs';

const { BENCH_DB, BENCH_PORT } = process.env;
const db = openDatabase(BENCH_DB);
const tokenQ = tokenQuery(db);
const listQ = db.prepare(SQLITE_QUERY);
const PATH = `/api/v1/collections/${W11_COLLECTION}/records`;

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (path === '/readyz') return send(res, 200, '{"status":"ok"}');
  if (path !== PATH || req.method !== 'GET') return send(res, 404, '{"code":"not_found"}');
  const presented = bearer(req.headers.authorization);
  const token = presented ? tokenQ.get(sha256Hex(presented)) : undefined;
  if (!token) return send(res, 401, '{"code":"unauthorized"}');
  const params = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
  const limit = Number(params.get('limit') ?? 50);
  const rows = listQ.all('open', 3, limit + 1);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  send(res, 200, recordListJson(items, rows.length > limit ? keysetCursor(items.at(-1)) : null));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(BENCH_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)) && server.closeAllConnections());
