// What a NOTIFY inside a write's transaction costs concurrent commits on PostgreSQL (bench/README, "Wake-ups after
// the commit"): 64 writers on a pool of 16 connections, each a transaction of one ~1 KB insert, committed with
// synchronous_commit=on, in three ways, rounds interleaved: no NOTIFY; `pg_notify` inside the transaction (what svc's
// writes did); `pg_notify` as a statement of its own after the commit (what they do now). Prints commits/s and the
// transaction's p50/p99 per round, then the medians. Not part of `npm run bench`.
//
//   node bench/notify-commits.mjs [--rounds N] [--seconds S]
import pg from 'pg';
import { createDb, dbUrl, dropDb } from './lib/pg.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const rounds = arg('--rounds', 3);
const seconds = arg('--seconds', 4);
const WRITERS = 64;

const INSERT = 'insert into notify_probe (body) values ($1)';
const NOTIFY = "select pg_notify('svc_bench_probe', '')";
const ways = {
  none: { inside: null, after: null },
  inside: { inside: NOTIFY, after: null },
  after: { inside: null, after: NOTIFY },
};

const name = `svc_bench_${process.pid}_notify`;
await createDb(name);
const pool = new pg.Pool({ connectionString: dbUrl(name), max: 16 });
try {
  await pool.query('create table notify_probe (id bigserial primary key, body text)');
  const body = 'x'.repeat(1000);
  const results = Object.fromEntries(Object.keys(ways).map((w) => [w, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const [way, { inside, after }] of Object.entries(ways)) {
      const latencies = [];
      const end = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          while (performance.now() < end) {
            const start = performance.now();
            const c = await pool.connect();
            try {
              await c.query('begin');
              await c.query(INSERT, [body]);
              if (inside) await c.query(inside);
              await c.query('commit');
              if (after) await c.query(after);
            } finally {
              c.release();
            }
            latencies.push(performance.now() - start);
          }
        }),
      );
      latencies.sort((a, b) => a - b);
      const rate = Math.round(latencies.length / seconds);
      const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))].toFixed(1);
      results[way].push(rate);
      console.log(`round ${round}/${rounds} ${way.padEnd(6)} ${String(rate).padStart(6)} commits/s  p50 ${at(0.5)} ms  p99 ${at(0.99)} ms`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [way, rates] of Object.entries(results)) console.log(`${way.padEnd(6)} median ${median(rates)} commits/s (rounds: ${rates.join(', ')})`);
} finally {
  await pool.end();
  await dropDb(name);
}
