// W1 baseline: raw node:http + better-sqlite3 on svc's own database file. Per request: the bearer token's
// SHA-256 looked up in api_tokens (one indexed query), then the same list query svc runs (limit + 1 rows),
// and the same JSON, assembled as text the way svc does.
import http from 'node:http';
import { bearer, encodeCursor, recordListJson, send, sha256Hex } from './common.mjs';
import { openDatabase, tokenQuery } from './sqlite-db.mjs';

const { BENCH_DB, BENCH_PORT } = process.env;
const db = openDatabase(BENCH_DB);
const tokenQ = tokenQuery(db);
// Its limit an expression, as svc's page writes it: SQLite plans a statement with a bare LIMIT parameter's value and
// plans it again whenever the parameter is bound (on every request).
const listQ = db.prepare('select * from "records" where "collection" = ? order by "id" limit (? + 0)');
const ROUTE = /^\/api\/v1\/collections\/([a-z][a-z0-9_]{0,62})\/records$/;

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (path === '/readyz') return send(res, 200, '{"status":"ok"}');
  const m = ROUTE.exec(path);
  if (!m || req.method !== 'GET') return send(res, 404, '{"code":"not_found"}');
  const presented = bearer(req.headers.authorization);
  const token = presented ? tokenQ.get(sha256Hex(presented)) : undefined;
  if (!token) return send(res, 401, '{"code":"unauthorized"}', { 'www-authenticate': 'Bearer realm="svc"' });
  if (!JSON.parse(token.scopes).includes('records:read')) return send(res, 403, '{"code":"forbidden"}');
  const limit = Number(new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1)).get('limit') ?? 50);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) return send(res, 400, '{"code":"invalid_query"}');
  const rows = listQ.all(m[1], limit + 1);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const next = rows.length > limit ? encodeCursor(items[items.length - 1].id) : null;
  send(res, 200, recordListJson(items, next));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(BENCH_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)) && server.closeAllConnections());
