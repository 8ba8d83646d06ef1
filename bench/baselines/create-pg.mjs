// W3 baseline: raw node:http + pg on a database with svc's schema (made by `svc migrate`), a pool as large as
// svc's (16). Per request: token lookup, parse, minimal validation, then BEGIN; subscribed targets; the record,
// its event, one delivery job per target; COMMIT.
import http from 'node:http';
import pg from 'pg';
import { bearer, iso, newId, readBody, send, sha256Hex } from './common.mjs';

const { BENCH_DB_URL, BENCH_PORT, BENCH_TOKEN, BENCH_POOL = '16', BENCH_TARGET_URL } = process.env;
pg.types.setTypeParser(20, (v) => Number(v));
const pool = new pg.Pool({ connectionString: BENCH_DB_URL, max: Number(BENCH_POOL) });
pool.on('error', () => {});

const now0 = Date.now();
await pool.query('insert into api_tokens (id, name, token_hash, scopes, collections, created_at) values ($1, $2, $3, $4, null, $5) on conflict do nothing', [
  newId('tok'), 'bench', sha256Hex(BENCH_TOKEN), JSON.stringify(['records:read', 'records:write']), now0]);
await pool.query('insert into collections (name, fields, created_at, updated_at) values ($1, $2, $3, $4) on conflict do nothing', [
  'bench', JSON.stringify([{ name: 'title', type: 'text', required: true }]), now0, now0]);
if ((await pool.query('select count(*)::int as n from webhooks')).rows[0].n === 0) {
  await pool.query('insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at) values ($1, $2, $3, $4, 1, $5, $6, $7)', [
    newId('wh'), 'bench', BENCH_TARGET_URL ?? 'https://127.0.0.1:9/hook', JSON.stringify(['record.created']), 'sealed', now0, now0]);
}

async function create(collection, data) {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const now = Date.now();
    const targets = (await c.query('select id, topics from webhooks where enabled = 1')).rows.filter((t) => JSON.parse(t.topics).includes('record.created'));
    const record = { id: newId('rec', now), collection, version: 1, createdAt: iso(now), updatedAt: iso(now), data };
    await c.query('insert into records (id, collection, version, data, created_at, updated_at) values ($1, $2, 1, $3, $4, $5)', [record.id, collection, JSON.stringify(data), now, now]);
    const eventId = newId('evt', now);
    // The envelope's payload, stored once on the event for its jobs (as svc stores it since migration 003).
    const payload = targets.length > 0 ? JSON.stringify({ record, occurredAt: iso(now) }) : null;
    await c.query('insert into events (id, topic, collection, record_id, payload, created_at) values ($1, $2, $3, $4, $5, $6)', [eventId, 'record.created', collection, record.id, payload, now]);
    for (const t of targets) {
      await c.query(
        `insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, 'pending', 0, 0, $7, $7, $7)`,
        [newId('del', now), t.id, eventId, 'record.created', collection, record.id, now],
      );
    }
    await c.query('COMMIT');
    return record;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}

const ROUTE = /^\/api\/v1\/collections\/([a-z][a-z0-9_]{0,62})\/records$/;
const server = http.createServer(async (req, res) => {
  try {
    if (req.url === '/readyz') return send(res, 200, '{"status":"ok"}');
    const m = ROUTE.exec(req.url);
    if (!m || req.method !== 'POST') return send(res, 404, '{"code":"not_found"}');
    const presented = bearer(req.headers.authorization);
    const token = presented ? (await pool.query('select id, scopes, collections from api_tokens where token_hash = $1', [sha256Hex(presented)])).rows[0] : undefined;
    if (!token) return send(res, 401, '{"code":"unauthorized"}');
    let data;
    try {
      data = JSON.parse(await readBody(req)).data;
    } catch {
      return send(res, 400, '{"code":"invalid_json"}');
    }
    if (typeof data !== 'object' || data === null || typeof data.title !== 'string') return send(res, 422, '{"code":"validation_failed"}');
    send(res, 201, JSON.stringify(await create(m[1], data)), { etag: '"1"' });
  } catch (err) {
    send(res, 500, '{"code":"internal"}');
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(BENCH_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))) && server.closeAllConnections());
