import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { admin, recordData, startSvc } from './svc.mjs';
import { drainWithSvc } from './w4-deliver.mjs';

const VERSIONS_PER_RECORD = 10;

/** `records` creates, then `VERSIONS_PER_RECORD - 1` rounds of one PATCH per record, 32 requests at a time. */
async function seedVersions(url, token, records) {
  const pool = new Pool(url, { connections: 32, pipelining: 1 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const send = async (path, method, body) => {
    const res = await pool.request({ path, method, headers, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`seeding: ${method} ${path} → ${res.statusCode} ${text.slice(0, 200)}`);
    return JSON.parse(text);
  };
  const inParallel = async (items, fn) => {
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next < items.length) await fn(items[next++]);
    }));
  };
  const ids = [];
  await inParallel(Array.from({ length: records }, (_, i) => i), async (i) => ids.push((await send('/api/v1/collections/bench/records', 'POST', { data: recordData(i) })).id));
  for (let v = 2; v <= VERSIONS_PER_RECORD; v++) {
    await inParallel(ids, (id) => send(`/api/v1/collections/bench/records/${id}`, 'PATCH', { data: { title: `version ${v}` } }));
  }
  await pool.close();
  return ids.length * VERSIONS_PER_RECORD;
}

/**
 * W4O: W4's drain (SQLite, 1 target) with `ordering: "record"` — `jobs` jobs over jobs/10 records, ten versions
 * each, so at any time nine of every record's ten jobs are held — against the same drain of the same copy with the
 * ordering switched off (the held jobs made pending before the clock starts). Measures what waiting costs.
 */
export async function w4Ordered(ctx, receiver) {
  const { opts } = ctx;
  const dir = ctx.dir('w4o');
  const url = `sqlite:${join(dir, 'template.db')}`;
  const svc = await startSvc({ mode: 'api', databaseUrl: url, tls: ctx.tls, logFile: ctx.logFile('w4o-seed'), env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
  const records = Math.ceil(opts.jobs / VERSIONS_PER_RECORD);
  let count;
  try {
    const a = await admin(svc.url);
    await a.collection('bench');
    const token = await a.token();
    await a.webhook(receiver.urls[0], 0, { topics: ['record.created', 'record.updated'], ordering: 'record' });
    const t0 = performance.now();
    count = await seedVersions(svc.url, token, records);
    ctx.progress('W4O', `seeded ${records} records × ${VERSIONS_PER_RECORD} versions → ${count} jobs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await svc.stop();
  }
  const tpl = { url, count, dir, kind: 'sqlite', name: 'w4o' };
  // The unordered side: the same jobs, nothing held.
  const unordered = async (cloneUrl) => {
    const db = new Database(cloneUrl.slice('sqlite:'.length));
    try {
      db.exec(`update webhooks set ordering = 'none'; update delivery_jobs set state = 'pending' where state = 'held'`);
    } finally {
      db.close();
    }
  };
  const rounds = { none: [], record: [] };
  for (let r = 1; r <= opts.rounds; r++) {
    for (const side of ['none', 'record']) {
      const res = await drainWithSvc(ctx, tpl, receiver, { label: `w4o-${side}`, prepare: side === 'none' ? unordered : null });
      res.rate = res.count / res.seconds;
      rounds[side].push(res);
      ctx.progress('W4O', `round ${r}/${opts.rounds} ordering ${side.padEnd(6)} ${Math.round(res.rate)} deliveries/s (${res.count} in ${res.seconds.toFixed(2)} s)${res.partial ? ` — STOPPED at the ${opts.drainTimeoutMs / 1000} s limit` : ''}`);
    }
  }
  ctx.ratioCell({
    workload: 'W4O',
    measure: `drain ${count} jobs over ${records} records, 1 target, SQLite, ordering record vs none, deliveries/s`,
    unit: '/s',
    baseline: rounds.none.map((x) => x.rate),
    svc: rounds.record.map((x) => x.rate),
    min: 0.8,
    raw: rounds,
  });
}
