import Database from 'better-sqlite3';
import { query } from './pg.mjs';
import { startSvc } from './svc.mjs';
import { cloneTemplate, seedTemplate } from './w4-deliver.mjs';

/** The limited target's rate, as the brief's example: well under what its receiver takes, so the limit decides. */
const PER_SECOND = 50;
const POLL_MS = 10;

/** SQL run on a round's copy before its clock starts; `bench-0` is the unlimited target, `bench-1` the other. */
async function onCopy(kind, url, statements) {
  if (kind === 'pg') {
    for (const s of statements) await query(url, s);
    return;
  }
  const db = new Database(url.slice('sqlite:'.length));
  try {
    for (const s of statements) db.exec(s);
  } finally {
    db.close();
  }
}

/**
 * One `svc worker` on a fresh copy; the clock runs from the unlimited target's first delivery to its last (`count`),
 * read from the receiver's per-port counts every POLL_MS: the limited target's deliveries go on meanwhile, and the
 * drain's end is the unlimited one's. The limited target's deliveries in that time are returned too.
 */
async function drainFree(ctx, tpl, receiver, { count, label, prepare }) {
  const clone = await cloneTemplate(ctx, tpl);
  await onCopy(tpl.kind, clone.url, prepare);
  const [freePort, limitedPort] = receiver.ports;
  // Counted from here: the receiver's per-port counts run on from earlier drains.
  const before = (await receiver.stats()).perPort;
  const since = (s, port) => (s.perPort[port] ?? 0) - (before[port] ?? 0);
  const t0 = performance.now();
  let worker = null;
  try {
    worker = await startSvc({ mode: 'worker', databaseUrl: clone.url, tls: ctx.tls, logFile: ctx.logFile(label), cpuProfDir: ctx.cpuProfDir });
    let first = null;
    for (;;) {
      const s = await receiver.stats();
      const now = performance.now();
      const free = since(s, freePort);
      if (free > 0) first ??= now;
      if (free >= count || now - t0 > ctx.opts.drainTimeoutMs) {
        return { count: free, seconds: (now - (first ?? t0)) / 1000, limited: since(s, limitedPort), partial: free < count };
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    await worker?.stop();
    await clone.drop().catch(() => {});
  }
}

/**
 * W4L: W4's drain (1 `svc worker`) to an unlimited target beside a target limited to PER_SECOND (SPEC §13
 * `rateLimit`) whose half of the jobs waits behind its limit the whole time, against the same drain of the same copy
 * with the limited target's jobs removed before the clock starts: what the limited target's backlog costs the other.
 */
export async function w4Limited(ctx, receiver, kinds) {
  const { opts } = ctx;
  for (const kind of kinds) {
    const name = `w4l_${kind}`;
    const tpl = await seedTemplate(ctx, { kind, name, targets: 2, jobs: opts.jobs, receiver });
    const count = tpl.count / 2;
    const sides = {
      alone: [`delete from delivery_jobs where webhook_id = (select id from webhooks where name = 'bench-1')`],
      limited: [`update webhooks set rate_per_second = ${PER_SECOND} where name = 'bench-1'`],
    };
    const rounds = { alone: [], limited: [] };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const side of ['alone', 'limited']) {
        const res = await drainFree(ctx, tpl, receiver, { count, label: `${name}-${side}`, prepare: sides[side] });
        res.rate = res.count / res.seconds;
        rounds[side].push(res);
        const beside = side === 'limited' ? `; the limited target ${res.limited} (${(res.limited / res.seconds).toFixed(0)}/s)` : '';
        ctx.progress('W4L', `${kind} round ${r}/${opts.rounds} ${side.padEnd(7)} ${Math.round(res.rate)} deliveries/s (${res.count} in ${res.seconds.toFixed(2)} s${beside})${res.partial ? ` — STOPPED at the ${opts.drainTimeoutMs / 1000} s limit` : ''}`);
      }
    }
    const db = kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    ctx.ratioCell({
      workload: 'W4L',
      measure: `drain ${count} jobs to 1 target beside ${count} waiting for a target limited to ${PER_SECOND}/s, ${db}, the unlimited target's deliveries/s`,
      unit: '/s',
      baseline: rounds.alone.map((x) => x.rate),
      svc: rounds.limited.map((x) => x.rate),
      min: 0.9,
      raw: rounds,
    });
  }
}
