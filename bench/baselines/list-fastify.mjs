// W1's floor on svc's stack: the raw baseline's exact work (list-sqlite.mjs: token look-up, the same list query, the
// same JSON as text) inside one Fastify route, with nothing svc adds: no hooks, no logger, no schema. What Fastify's
// own request pipeline costs per request, measured against node:http in the same run (W1F).
import Fastify from 'fastify';
import { bearer, encodeCursor, recordListJson, sha256Hex } from './common.mjs';
import { openDatabase, tokenQuery } from './sqlite-db.mjs';

const { BENCH_DB, BENCH_PORT } = process.env;
const db = openDatabase(BENCH_DB);
const tokenQ = tokenQuery(db);
// The raw baseline's statement (list-sqlite.mjs), its limit an expression as svc's page writes it.
const listQ = db.prepare('select * from "records" where "collection" = ? order by "id" limit (? + 0)');

const app = Fastify({ logger: false, keepAliveTimeout: 60_000 });
const problem = (reply, status, code) => reply.code(status).header('content-type', 'application/json; charset=utf-8').send(`{"code":"${code}"}`);
app.get('/readyz', (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send('{"status":"ok"}'));
app.get('/api/v1/collections/:collection/records', (request, reply) => {
  const presented = bearer(request.headers.authorization);
  const token = presented ? tokenQ.get(sha256Hex(presented)) : undefined;
  if (!token) return problem(reply.header('www-authenticate', 'Bearer realm="svc"'), 401, 'unauthorized');
  if (!JSON.parse(token.scopes).includes('records:read')) return problem(reply, 403, 'forbidden');
  const limit = Number(request.query.limit ?? 50);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) return problem(reply, 400, 'invalid_query');
  const rows = listQ.all(request.params.collection, limit + 1);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const next = rows.length > limit ? encodeCursor(items[items.length - 1].id) : null;
  reply.header('content-type', 'application/json; charset=utf-8').send(recordListJson(items, next));
});
await app.listen({ port: Number(BENCH_PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
