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
  for (const j of jobs) {
    const pace = pacedBatches(ctx, opts.batchSize ?? BATCH);
    for (;;) {
      if (!(await proceed())) return total;
      const limit = pace.size;
      const n = await pace.timed(() => prune(db, caps, { ...j, limit }));
      total.delivery_jobs += n.jobs;
      total.delivery_attempts += n.attempts;
      opts.onBatch?.({ delivery_jobs: n.jobs, delivery_attempts: n.attempts });
      if (n.jobs < limit) break;
      await nextTurn();
    }
  }
  const pace = pacedBatches(ctx, opts.batchSize ?? BATCH);
  for (;;) {
    if (!(await proceed())) return total;
    const limit = pace.size;
    const n = await pace.timed(() => pruneEvents(db, caps, { ...events, limit }));
    total.events += n.events;
    opts.onBatch?.({ events: n.events });
    if (n.events < limit) break;
    await nextTurn();
  }
  return total;
}

/** The size of the next batch, from how long the last one took (BATCH_TARGET_MS), at most `max`. */
function pacedBatches(ctx: Context, max: number): { readonly size: number; timed<T>(batch: () => Promise<T>): Promise<T> } {
  let size = Math.min(max, FIRST_BATCH);
  return {
    get size() {
      return size;
    },
    async timed(batch) {
      const started = ctx.clock.now();
      const result = await batch();
      const took = ctx.clock.now() - started;
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
