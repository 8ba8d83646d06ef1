// W2 baseline: raw node:http + better-sqlite3 on a database with svc's schema (made by `svc migrate`), the
// same pragmas (WAL, synchronous as svc ships it). Per request: token lookup, parse, minimal validation, then
// in one transaction: subscribed targets, the record, its event, one delivery job per target.
import http from 'node:http';
import Database from 'better-sqlite3';
import { bearer, iso, newId, readBody, send, sha256Hex } from './common.mjs';

const { BENCH_DB, BENCH_PORT, BENCH_TOKEN, BENCH_SYNCHRONOUS = 'FULL', BENCH_TARGET_URL } = process.env;
const db = new Database(BENCH_DB);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${BENCH_SYNCHRONOUS}`);
db.pragma('busy_timeout = 5000');
db.pragma('foreign_keys = ON');

const now0 = Date.now();
db.prepare('insert or ignore into api_tokens (id, name, token_hash, scopes, collections, created_at) values (?, ?, ?, ?, null, ?)').run(
  newId('tok'), 'bench', sha256Hex(BENCH_TOKEN), JSON.stringify(['records:read', 'records:write']), now0);
db.prepare('insert or ignore into collections (name, fields, created_at, updated_at) values (?, ?, ?, ?)').run(
  'bench', JSON.stringify([{ name: 'title', type: 'text', required: true }]), now0, now0);
if (db.prepare('select count(*) as n from webhooks').get().n === 0) {
  db.prepare('insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at) values (?, ?, ?, ?, 1, ?, ?, ?)').run(
    newId('wh'), 'bench', BENCH_TARGET_URL ?? 'https://127.0.0.1:9/hook', JSON.stringify(['record.created']), 'sealed', now0, now0);
}

const tokenQ = db.prepare('select id, scopes, collections from api_tokens where token_hash = ?');
const targetsQ = db.prepare('select id, topics from webhooks where enabled = 1');
const insRecord = db.prepare('insert into records (id, collection, version, data, created_at, updated_at) values (?, ?, 1, ?, ?, ?)');
const insEvent = db.prepare('insert into events (id, topic, collection, record_id, payload, created_at) values (?, ?, ?, ?, ?, ?)');
const insJob = db.prepare(`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count,
  round_start, next_attempt_at, lease_id, lease_expires_at, last_error_code, last_error_message, created_at, updated_at)
  values (?, ?, ?, ?, ?, ?, 'pending', 0, 0, ?, null, null, null, null, ?, ?)`);

function createRow(collection, data) {
  const now = Date.now();
  const targets = targetsQ.all().filter((t) => JSON.parse(t.topics).includes('record.created'));
  const record = { id: newId('rec', now), collection, version: 1, createdAt: iso(now), updatedAt: iso(now), data };
  insRecord.run(record.id, collection, JSON.stringify(data), now, now);
  const eventId = newId('evt', now);
  // The envelope's payload, stored once on the event for its jobs (as svc stores it since migration 003).
  const payload = targets.length > 0 ? JSON.stringify({ record, occurredAt: iso(now) }) : null;
  insEvent.run(eventId, 'record.created', collection, record.id, payload, now);
  for (const t of targets) insJob.run(newId('del', now), t.id, eventId, 'record.created', collection, record.id, now, now, now);
  return record;
}
const create = db.transaction(createRow);

// W12's baseline: the same creates, all of one request's in one transaction.
const createMany = db.transaction((ops) => ops.map((op) => createRow(op.collection, op.data)));

async function batch(req, res) {
  let ops;
  try {
    ops = JSON.parse(await readBody(req)).operations;
  } catch {
    return send(res, 400, '{"code":"invalid_json"}');
  }
  if (!Array.isArray(ops) || ops.some((op) => op.method !== 'POST' || typeof op.data?.title !== 'string')) return send(res, 422, '{"code":"validation_failed"}');
  const records = createMany(ops);
  send(res, 200, JSON.stringify({ results: records.map((record) => ({ status: 201, record })) }));
}

const ROUTE = /^\/api\/v1\/collections\/([a-z][a-z0-9_]{0,62})\/records$/;
const server = http.createServer(async (req, res) => {
  if (req.url === '/readyz') return send(res, 200, '{"status":"ok"}');
  if (req.url === '/api/v1/batch' && req.method === 'POST') {
    if (!(bearer(req.headers.authorization) && tokenQ.get(sha256Hex(bearer(req.headers.authorization))))) return send(res, 401, '{"code":"unauthorized"}');
    return batch(req, res);
  }
  const m = ROUTE.exec(req.url);
  if (!m || req.method !== 'POST') return send(res, 404, '{"code":"not_found"}');
  const presented = bearer(req.headers.authorization);
  const token = presented ? tokenQ.get(sha256Hex(presented)) : undefined;
  if (!token) return send(res, 401, '{"code":"unauthorized"}');
  let data;
  try {
    data = JSON.parse(await readBody(req)).data;
  } catch {
    return send(res, 400, '{"code":"invalid_json"}');
  }
  if (typeof data !== 'object' || data === null || typeof data.title !== 'string') return send(res, 422, '{"code":"validation_failed"}');
  const record = create(m[1], data);
  send(res, 201, JSON.stringify(record), { etag: '"1"' });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(BENCH_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)) && server.closeAllConnections());
