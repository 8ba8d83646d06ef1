import { randomBytes } from 'node:crypto';
import { Counter, type Registry } from './lib/prometheus.js';
import type { Context } from './context.js';
import { takeLease } from './db/meta-store.js';
import { countPrunableEvents, pruneEvents } from './events/retention-store.js';
import { idFloor } from './lib/ids.js';
import { nextTurn } from './lib/turns.js';
import { countPrunable } from './webhooks/queue/jobs-store.js';
import { prune } from './webhooks/queue/prune.js';

/** Rows removed (or, in a dry run, that would be) per table. */
export interface PruneCounts {
  delivery_jobs: number;
  delivery_attempts: number;
  events: number;
}

export const PRUNED_TABLES = ['delivery_jobs', 'delivery_attempts', 'events'] as const;

const DAY_MS = 86_400_000;
// Small transactions (SPEC §10): a batch of jobs holds their attempts too, a few thousand rows at most.
const BATCH = 500;
/**
 * A batch should take about this long (SPEC §12: nothing holds the event loop). Rows differ a thousandfold in size: on
 * SQLite, whose statements run on the main thread, one batch of 500 events of ~2 MB (updates of 1 MiB records) took
 * 2 s to delete (each overflow page is read to be freed). So batches start at FIRST_BATCH rows, double while they
 * take under half of this and halve when one takes longer: small rows reach BATCH within a few batches, big ones
 * settle where a batch takes tens of milliseconds.
 */
const BATCH_TARGET_MS = 25;
const FIRST_BATCH = 4;
const EVERY_MS = 60_000;
// Longer than a pause between passes, renewed before every batch: a pass that dies hands over within this.
const LEASE_MS = 90_000;
const LEASE_KEY = 'retention_lease';

export interface PassOptions {
  dryRun?: boolean;
  batchSize?: number;
  /**
   * Another process may be writing the database meanwhile (`svc prune` beside `svc serve`): after each batch the pass
   * leaves the write lock free as long as that process's writer needs to take it (caps.restAfterWrite), instead of
   * only the event loop's next turn, which lets this process's own writes in and is all a pass inside the server needs.
   */
  othersWrite?: boolean;
  /** Before each batch: false stops the pass (the lease was lost, or the process is stopping). */
  proceed?: () => Promise<boolean>;
  /** After each batch's commit. */
  onBatch?: (removed: Partial<PruneCounts>) => void;
}

/**
 * One retention pass (SPEC §10): delivered jobs past SVC_RETENTION_DELIVERED_DAYS from delivery and dead ones past
 * SVC_RETENTION_DEAD_DAYS from death, with their attempts; then events past SVC_RETENTION_EVENTS_DAYS that no
 * unfinished or dead job needs (those the jobs' pruning just freed included). Each batch is its own short
 * transaction, so no lock is held for long and writers interleave with it. A dry run counts instead.
 */
export async function prunePass(ctx: Context, opts: PassOptions = {}): Promise<PruneCounts> {
  const { db, caps } = ctx.database;
  const c = ctx.config;
  const now = ctx.clock.now();
  const cutoff = (days: number) => now - Math.round(days * DAY_MS);
  const jobs = [
    { state: 'delivered' as const, before: cutoff(c.retentionDeliveredDays) },
    { state: 'dead' as const, before: cutoff(c.retentionDeadDays) },
  ];
  const eventsBefore = cutoff(c.retentionEventsDays);
  const events = { before: eventsBefore, idBelow: idFloor('evt', eventsBefore) };
  const total: PruneCounts = { delivery_jobs: 0, delivery_attempts: 0, events: 0 };
  if (opts.dryRun) {
    for (const j of jobs) {
      const n = await countPrunable(db, j);
      total.delivery_jobs += n.jobs;
      total.delivery_attempts += n.attempts;
    }
    total.events = await countPrunableEvents(db, caps, events);
    return total;
  }
  const proceed = opts.proceed ?? (async () => true);
  const pace = pacedBatches(ctx, opts.batchSize ?? BATCH, opts.othersWrite === true);
  for (const j of jobs) {
    pace.restart();
    for (;;) {
      await pace.rest();
      if (!(await proceed())) return total;
      const limit = pace.size;
      const n = await pace.timed(() => prune(db, caps, { ...j, limit }));
      total.delivery_jobs += n.jobs;
      total.delivery_attempts += n.attempts;
      opts.onBatch?.({ delivery_jobs: n.jobs, delivery_attempts: n.attempts });
      if (n.jobs < limit) break;
    }
  }
  pace.restart();
  for (;;) {
    await pace.rest();
    if (!(await proceed())) return total;
    const limit = pace.size;
    const n = await pace.timed(() => pruneEvents(db, caps, { ...events, limit }));
    total.events += n.events;
    opts.onBatch?.({ events: n.events });
    if (n.events < limit) break;
  }
  return total;
}

interface Pace {
  /** The size of the next batch, from how long the last one of its kind took (BATCH_TARGET_MS), at most `max`. */
  readonly size: number;
  /** Another kind of rows: sizes start again from FIRST_BATCH. */
  restart(): void;
  /**
   * Before a batch, after the one before it (of whatever kind): the event loop's next turn, where requests (and their
   * writes) of this process run; with `othersWrite`, the write lock left free as long as another process's writer
   * needs after a transaction of that length (caps.restAfterWrite; on SQLite 10-20 ms after the 5-25 ms of a batch).
   */
  rest(): Promise<void>;
  timed<T>(batch: () => Promise<T>): Promise<T>;
}

function pacedBatches(ctx: Context, max: number, othersWrite: boolean): Pace {
  let size = Math.min(max, FIRST_BATCH);
  let lastMs: number | null = null;
  return {
    get size() {
      return size;
    },
    restart() {
      size = Math.min(max, FIRST_BATCH);
    },
    async rest() {
      if (lastMs === null) return;
      const ms = othersWrite ? ctx.database.caps.restAfterWrite(lastMs) : 0;
      await (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : nextTurn());
    },
    async timed(batch) {
      const started = ctx.clock.now();
      const result = await batch();
      const took = (lastMs = ctx.clock.now() - started);
      if (took > BATCH_TARGET_MS) size = Math.max(1, Math.floor(size / 2));
      else if (took < BATCH_TARGET_MS / 2) size = Math.min(max, size * 2);
      return result;
    },
  };
}

export function registerRetentionMetrics(registry: Registry): (removed: Partial<PruneCounts>) => void {
  const counter = new Counter({ name: 'svc_pruned_rows_total', help: 'Rows removed by retention, by table', labelNames: ['table'], registers: [registry] });
  for (const table of PRUNED_TABLES) counter.labels(table).inc(0);
  return (removed) => {
    for (const table of PRUNED_TABLES) {
      const n = removed[table] ?? 0;
      if (n > 0) counter.labels(table).inc(n);
    }
  };
}

/**
 * Retention in the background, every minute, in whichever process holds the lease (any number of processes may run
 * this; one prunes at a time). Returns the stop function, which waits for a batch under way.
 */
export function startRetention(ctx: Context, onBatch: (removed: Partial<PruneCounts>) => void): () => Promise<void> {
  const owner = randomBytes(9).toString('hex');
  let stopped = false;
  let running: Promise<void> | null = null;
  const leased = () => takeLease(ctx.database.db, LEASE_KEY, owner, ctx.clock.now(), LEASE_MS);
  const run = () => {
    if (running || stopped) return;
    running = prunePass(ctx, { onBatch, proceed: async () => !stopped && (await leased()) })
      .then((removed) => {
        if (removed.delivery_jobs + removed.delivery_attempts + removed.events > 0) ctx.logger.info({ removed }, 'retention pruned rows');
      })
      .catch((err: unknown) => ctx.logger.warn({ err }, 'retention pass failed; it runs again later'))
      .finally(() => (running = null));
  };
  const timer = setInterval(run, EVERY_MS);
  timer.unref();
  run();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
