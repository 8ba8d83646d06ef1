import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { OutageBackoff } from '../../db/database-errors.js';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import type { Decision } from '../decision.js';
import { complete } from '../queue/complete.js';
import type { AttemptRecord, HeldJob } from '../queue/job.js';
import { markDead } from '../queue/mark-dead.js';
import { release } from '../queue/release.js';
import { scheduleRetries, type Retry } from '../queue/schedule-retry.js';
import type { Enqueued } from '../queue/enqueue.js';
import type { AutoDisableRule } from '../target-health-store.js';
import { recordConsequences } from './consequences.js';

/**
 * How long a job waits when a sealed value of its target (secret, previous secret, headers) does not open with this
 * process's key (svc refuses to start with another key than the database's: a row copied from elsewhere, or damaged):
 * until the operator rotates the secret (overlapSeconds 0) and sets the headers again, every attempt would be refused.
 */
export const UNSIGNABLE_DELAY_MS = 60_000;

/** A decided attempt, waiting for its transition to be written. */
export interface Finished {
  job: HeldJob;
  decision: Decision;
  /** The attempt's record (unused when the decision is not-attempted). */
  attempt: AttemptRecord;
}

export interface CompleterOptions {
  now: () => number;
  logger: Logger;
  /**
   * What to write instead when a result cannot be written as it is, after `tries`: the same attempt as a failed one
   * with nothing of the receiver's answer kept (decided again, so the schedule still runs). Never an endless
   * redelivery: that would be a job whose result can never land, sent again each time its lease expires.
   */
  degrade: (f: Finished, err: unknown) => Finished;
  maxBatch?: number;
  /**
   * How long a batch gathers before it commits. better-sqlite3 runs a whole transaction without letting a response
   * in, so without a pause most batches would hold a handful of results, each batch paying a sync. 25 ms by
   * default: the slots are free meanwhile (a result waits, not an attempt), and against 10 ms it halves the commits
   * (W4 SQLite, ten targets: the worker's CPU 3.26–3.41 → 3.08–3.27 s a drain).
   */
  gatherMs?: number;
  tries?: number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Failed attempts counted on their targets, auto-disable, and operational events (consequences.ts), written with
   * the batch; `committed` is told of the events' jobs after the commit (to wake workers and feed readers).
   */
  operations?: { rule: AutoDisableRule; committed: (outcome: { events: readonly Enqueued[]; disabledTargets: readonly string[] }) => void };
  /** After each batch's commit: its results and which of them were written (the worker marks targets due again). */
  written?: (batch: readonly Finished[], applied: ReadonlySet<string>) => void;
  /** After each batch is done with (written, degraded or left to its leases): what is unwritten went down. */
  settled?: () => void;
}


const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Group commit for finished attempts: whatever queues during a short gathering pause, or while the previous commit is
 * in flight, is written in one transaction (the delivered jobs with one guarded UPDATE that records each one's attempt
 * on its row, migration 020; failures with their attempt rows and releases beside them). Under load that turns hundreds
 * of statements and syncs into a few. Until its write lands a job stays `delivering` under its lease, so nobody else
 * takes it; if it never lands (database gone, process killed) the lease expires and the job is sent again. A batch
 * that fails as a whole is written one result at a time, so one bad write cannot take the others down with it.
 */
export class Completer {
  private queue: Finished[] = [];
  /** The bodies' bytes of the queue's results, and what the batch being written holds. */
  private queuedBytes = 0;
  private writing = { results: 0, bytes: 0 };
  private flushing: Promise<void> | null = null;
  private readonly maxBatch: number;
  private readonly gatherMs: number;
  private readonly tries: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly outage: OutageBackoff;
  private closing = false;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly caps: DialectCapabilities,
    private readonly opts: CompleterOptions,
  ) {
    this.maxBatch = opts.maxBatch ?? 256;
    this.gatherMs = opts.gatherMs ?? 25;
    this.tries = opts.tries ?? 3;
    this.sleep = opts.sleep ?? pause;
    this.outage = new OutageBackoff(opts.logger, 'recording delivery results');
  }

  submit(finished: Finished): void {
    this.queue.push(finished);
    this.queuedBytes += finished.job.body.length;
    if (!this.flushing) this.flushing = this.drain();
  }

  /** Results submitted and not yet done with, and their jobs' bytes: the worker claims no more while they are too many (worker.ts). */
  get unwrittenResults(): number {
    return this.queue.length + this.writing.results;
  }

  get unwrittenBytes(): number {
    return this.queuedBytes + this.writing.bytes;
  }

  /** Resolves when everything submitted so far is written (or given up on). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Stopping: a batch waiting out a database outage is given up to its leases rather than held to the end. */
  async close(): Promise<void> {
    this.closing = true;
    await this.idle();
    this.closing = false;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      if (this.gatherMs > 0 && this.queue.length < this.maxBatch) await this.sleep(this.gatherMs);
      const batch = this.queue.splice(0, this.maxBatch);
      const bytes = batch.reduce((sum, f) => sum + f.job.body.length, 0);
      this.queuedBytes -= bytes;
      this.writing = { results: batch.length, bytes };
      try {
        this.report(batch, await this.write(batch));
        this.outage.succeeded();
      } catch (err) {
        const wait = this.outage.failed(err);
        if (wait === null || !(await this.writeThroughOutage(batch, wait))) for (const f of batch) await this.writeAlone(f);
      }
      this.writing = { results: 0, bytes: 0 };
      this.opts.settled?.();
    }
    this.flushing = null;
  }

  /**
   * The database cannot be reached, or is full: the batch is not at fault, so it is neither split nor degraded (a
   * delivered attempt would be recorded as failed). It is written again after a pause, doubling to 2 s, until it
   * lands or every job's lease has run out; past that the jobs are left to their leases (rescued, sent again: at
   * least once, never lost). False when another failure came up, which the caller handles result by result.
   */
  private async writeThroughOutage(batch: readonly Finished[], first: number): Promise<boolean> {
    const until = Math.max(...batch.map((f) => f.job.leaseExpiresAt));
    for (let wait = first; !this.closing && this.opts.now() < until; ) {
      await this.sleep(wait);
      try {
        this.report(batch, await this.write(batch));
        this.outage.succeeded();
        return true;
      } catch (err) {
        const next = this.outage.failed(err);
        if (next === null) return false;
        wait = next;
      }
    }
    this.opts.logger.warn({ jobs: batch.length }, 'delivery results could not be recorded before their leases ran out; those jobs will be sent again');
    return true;
  }

  /** One result, tried again after a pause, then degraded; a database that refuses even that leaves it to the lease. */
  private async writeAlone(f: Finished): Promise<void> {
    let last: unknown;
    for (let i = 0; i < this.tries; i++) {
      if (i > 0) await this.sleep(50 * 4 ** (i - 1));
      try {
        return this.report([f], await this.write([f]));
      } catch (err) {
        last = err;
      }
    }
    // A release that cannot be written needs no stand-in: the lease expires and the job is claimed again.
    if (f.decision.kind === 'not-attempted') {
      this.opts.logger.error({ err: last, deliveryId: f.job.id }, 'releasing the job failed; its lease will expire');
      return;
    }
    const degraded = this.opts.degrade(f, last);
    this.opts.logger.error({ err: last, deliveryId: f.job.id }, 'the attempt could not be recorded as it was; recording it as a failed attempt');
    try {
      this.report([degraded], await this.write([degraded]));
    } catch (err) {
      this.opts.logger.error({ err, deliveryId: f.job.id }, 'recording the attempt failed; the job is sent again when its lease expires');
    }
  }

  private report(batch: readonly Finished[], applied: Set<string>): void {
    this.opts.written?.(batch, applied);
    for (const f of batch) {
      if (!applied.has(f.job.id) && f.decision.kind !== 'not-attempted') {
        this.opts.logger.warn({ deliveryId: f.job.id }, 'lease lost before the attempt was recorded; another claim owns the job');
      }
    }
  }

  /** All delivered (the usual case under load): complete() alone, one statement on PostgreSQL. Else one transaction. */
  private async write(batch: readonly Finished[]): Promise<Set<string>> {
    const now = this.opts.now();
    const delivered = batch.filter((f) => f.decision.kind === 'delivered').map((f) => ({ job: f.job, attempt: f.attempt }));
    if (delivered.length === batch.length) return complete(this.db, this.caps, { now, done: delivered });
    let outcome: { events: readonly Enqueued[]; disabledTargets: readonly string[] } = { events: [], disabledTargets: [] };
    const applied = await this.db.transaction().execute(async (trx) => {
      const applied = await complete(trx, this.caps, { now, done: delivered });
      const released: HeldJob[] = [];
      const unsignable: HeldJob[] = [];
      const retries: Retry[] = [];
      for (const { job, decision, attempt } of batch) {
        if (decision.kind === 'not-attempted') (decision.reason === 'secret-unavailable' ? unsignable : released).push(job);
        else if (decision.kind === 'retry') retries.push({ job, attempt: { ...attempt, error: decision.error }, at: decision.at });
        else if (decision.kind === 'dead') {
          if (await markDead(trx, this.caps, { now, job, attempt: { ...attempt, error: decision.error } })) applied.add(job.id);
        }
      }
      for (const id of await scheduleRetries(trx, { now, retries })) applied.add(id);
      await release(trx, this.caps, { now, jobs: released });
      // Claimable at once, these would be claimed, refused and released again without end (W4-like rates of claims
      // and commits, for nothing): the secret opens again only once the key or the target changes.
      await release(trx, this.caps, { now, jobs: unsignable, dueAt: now + UNSIGNABLE_DELAY_MS });
      const ops = this.opts.operations;
      if (ops) outcome = await recordConsequences(trx, this.caps, { now, rule: ops.rule, written: batch.map((f) => ({ ...f, applied: applied.has(f.job.id) })) });
      return applied;
    });
    if (outcome.events.length > 0 || outcome.disabledTargets.length > 0) this.opts.operations?.committed(outcome);
    return applied;
  }
}
