import { randomBytes } from 'node:crypto';
import type { Context } from '../context.js';
import { nextAttemptDelay } from './backoff.js';
import type { AttemptOutcome, DeliveryRequest } from './http-client.js';
import { classify } from './outcome.js';
import { claimJobsOfTargets, type ClaimedJob, type ClaimOptions } from './queue/claim-jobs.js';
import { releaseJobs } from './queue/release-jobs.js';
import { rescueExpired } from './queue/rescue-expired.js';
import { signatureHeader } from './signing.js';
import { enabledTargets, type TargetRow } from './targets-store.js';
import { signingSecrets } from './targets.js';
import type { JobHandoff } from './handoff.js';
import type { WebhookMetrics } from './metrics.js';
import { ResultWriter } from './result-writer.js';

export interface DeliverySender {
  send(req: DeliveryRequest, signal?: AbortSignal): Promise<AttemptOutcome>;
}

/**
 * A worker holds about this much of a target's work claimed (at its recent pace, at least two rounds of its
 * concurrency): a fast receiver gets large claims, so claims (each a commit, on SQLite a sync) stay rare per
 * delivery; a slow one gets a few rounds, so other workers' share of its backlog is not hoarded. Waiting jobs hold a
 * lease; one that waited so long the lease could lapse mid-attempt is handed back unused (see attempt()).
 * 200 ms rather than 100: with ten busy targets sharing the slots, half as many claims (W4 SQLite, 10 targets:
 * 1 829 → 897 claim statements, SQLite time −14 %), while four workers sharing one slow target still scale 3.8×.
 */
const CLAIM_HORIZON_MS = 200;
/** At most this many jobs held per target, and this many times the process-wide concurrency in all. */
const MAX_HOLD_PER_TARGET = 256;
const HOLD_ROUNDS = 16;

interface Held {
  job: ClaimedJob;
  claimedAt: number;
  /** Handed-over jobs bring the target row their write read; claimed ones use the worker's view. */
  target?: TargetRow;
}

/**
 * Claims due jobs and runs their attempts, at most `webhookConcurrency` at once and at most
 * `webhookTargetConcurrency` per target, so one slow receiver cannot take every slot. Wakes on commit
 * signals, with a slow poll as the fallback; rescues expired leases of dead workers.
 */
export class DeliveryWorker implements JobHandoff {
  private readonly leaseId = `lease_${randomBytes(12).toString('base64url')}`;
  private running = 0;
  /** Aborted when stop()'s grace runs out: cancels every attempt still in flight. */
  private cancelAll = new AbortController();
  /** Per target: recent attempt duration (ms, moving average), to size its claims. */
  private readonly pace = new Map<string, number>();
  private readonly runningPerTarget = new Map<string, number>();
  private readonly waiting = new Map<string, Held[]>();
  private waitingCount = 0;
  private readonly targets = new Map<string, TargetRow>();
  private readonly idleTargets = new Set<string>();
  /** Set by commit signals and the poll: re-read the targets and probe idle ones again. */
  private refreshDue = true;
  private readonly secrets = new Map<string, { key: string; secrets: string[] }>();
  private pumping = false;
  private pumpAgain = false;
  private stopped = true;
  private pollTimer: NodeJS.Timeout | null = null;
  private rescueTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  private idle: Array<() => void> = [];
  private readonly tasks = new Set<Promise<void>>();
  private readonly results: ResultWriter;

  constructor(
    private readonly ctx: Context,
    private readonly sender: DeliverySender,
    private readonly metrics: WebhookMetrics | null = null,
    private readonly random: () => number = Math.random,
  ) {
    this.results = new ResultWriter(ctx.database.db, ctx.database.caps, this.leaseId);
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.refreshDue = true;
    this.cancelAll = new AbortController();
    const wake = () => {
      this.refreshDue = true;
      this.kick();
    };
    this.unsubscribe = await this.ctx.database.signal.subscribe(wake);
    this.pollTimer = setInterval(wake, this.ctx.config.webhookPollMs);
    const rescueEvery = Math.max(1000, Math.min(15_000, (this.ctx.config.webhookLeaseSeconds * 1000) / 4));
    this.rescueTimer = setInterval(() => void this.rescue(), rescueEvery);
    await this.rescue();
    this.ctx.handoff.current = this;
    this.kick();
  }

  /** JobHandoff: a new job of this process's own write, if its target has room here (same limits as a claim). */
  leaseFor(webhookId: string): { leaseId: string; leaseMs: number } | null {
    const { webhookConcurrency, webhookTargetConcurrency: perTarget } = this.ctx.config;
    if (this.stopped) return null;
    if (this.inFlight >= HOLD_ROUNDS * webhookConcurrency) return null;
    if (this.busy(webhookId) >= this.holdFor(webhookId, perTarget)) return null;
    return { leaseId: this.leaseId, leaseMs: this.ctx.config.webhookLeaseSeconds * 1000 };
  }

  /** JobHandoff: the jobs written under our lease have committed. */
  adopt(jobs: Array<{ job: ClaimedJob; target: TargetRow }>): void {
    if (this.stopped) {
      void this.release(jobs.map((j) => j.job.id));
      return;
    }
    this.hold(jobs);
  }

  private busy(targetId: string): number {
    return (this.runningPerTarget.get(targetId) ?? 0) + (this.waiting.get(targetId)?.length ?? 0);
  }

  private hold(jobs: Array<{ job: ClaimedJob; target?: TargetRow }>): void {
    const claimedAt = Date.now();
    for (const { job, target } of jobs) {
      const queue = this.waiting.get(job.webhook_id) ?? [];
      queue.push({ job, claimedAt, target });
      this.waiting.set(job.webhook_id, queue);
      this.waitingCount++;
    }
    for (const targetId of new Set(jobs.map((j) => j.job.webhook_id))) this.startWaiting(targetId);
  }

  /** Stop claiming; give in-flight attempts `graceMs` to finish, then abort them and release their jobs. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.ctx.handoff.current === this) this.ctx.handoff.current = null;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.rescueTimer) clearInterval(this.rescueTimer);
    await this.unsubscribe?.().catch(() => {});
    const waitingIds = [...this.waiting.values()].flat().map((h) => h.job.id);
    this.waiting.clear();
    this.waitingCount = 0;
    await this.release(waitingIds);
    const done = Promise.allSettled([...this.tasks]);
    const timer = setTimeout(() => this.cancelAll.abort(), graceMs);
    await done;
    clearTimeout(timer);
    await this.results.idle();
  }

  get inFlight(): number {
    return this.running + this.waitingCount;
  }

  kick(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      if (this.pumpAgain && !this.stopped) {
        this.pumpAgain = false;
        this.kick();
      } else if (this.inFlight === 0) this.idle.splice(0).forEach((f) => f());
    });
  }

  /**
   * Claims per target. A target holds up to holdFor() jobs (running + waiting) and is topped up once it drops to
   * half of that, so claims come about once per half-horizon of its work, not per delivery. Targets that had
   * nothing due are skipped until the next wake-up or poll, so a busy target's completions do not probe idle ones.
   */
  private async pump(): Promise<void> {
    const { webhookConcurrency, webhookTargetConcurrency: perTarget } = this.ctx.config;
    if (this.refreshDue) {
      this.refreshDue = false;
      this.idleTargets.clear();
      try {
        await this.refreshTargets();
      } catch (err) {
        this.ctx.logger.error({ err }, 'reading webhook targets failed; the poll will try again');
        return;
      }
    }
    const leaseMs = this.ctx.config.webhookLeaseSeconds * 1000;
    while (!this.stopped) {
      // A claim is due once some target is down to half its hold. Then every target that has a quarter of its hold
      // or more to fill is topped up in the same transaction: one commit (on SQLite one sync) for all of them,
      // rather than one per target each time it runs low.
      const wants: ClaimOptions[] = [];
      let due = false;
      let room = HOLD_ROUNDS * webhookConcurrency - this.inFlight;
      for (const target of this.targets.values()) {
        if (room <= 0) break;
        if (!target.enabled || this.idleTargets.has(target.id)) continue;
        const busy = this.busy(target.id);
        const hold = this.holdFor(target.id, perTarget);
        if (hold - busy < hold / 4) continue;
        // Near the process-wide limit, wait for room for a useful claim rather than claim a job or two at a time.
        if (room < Math.min(perTarget, hold - busy)) continue;
        const limit = Math.min(room, hold - busy);
        wants.push({ leaseId: this.leaseId, leaseMs, limit, webhookId: target.id });
        room -= limit;
        if (busy <= hold / 2) due = true;
      }
      if (!due || this.stopped) return;
      let claims: ClaimedJob[][];
      try {
        claims = await claimJobsOfTargets(this.ctx.database.db, this.ctx.database.caps, wants);
      } catch (err) {
        this.ctx.logger.error({ err }, 'claiming delivery jobs failed; the poll will try again');
        return;
      }
      let claimed = 0;
      claims.forEach((jobs, i) => {
        if (jobs.length === 0) this.idleTargets.add(wants[i]!.webhookId);
        claimed += jobs.length;
      });
      this.hold(claims.flat().map((job) => ({ job })));
      if (claimed === 0) return;
    }
  }

  private holdFor(targetId: string, perTarget: number): number {
    const ms = this.pace.get(targetId);
    // The slots this target actually gets: its own limit, or its share of the process-wide one when many are busy.
    const active = Math.max(1, this.targets.size - this.idleTargets.size);
    const slots = Math.min(perTarget, this.ctx.config.webhookConcurrency / active);
    const paced = ms === undefined ? 0 : Math.ceil((slots * CLAIM_HORIZON_MS) / Math.max(ms, 0.5));
    return Math.min(MAX_HOLD_PER_TARGET, Math.max(2 * perTarget, paced));
  }

  private async refreshTargets(): Promise<void> {
    const rows = await enabledTargets(this.ctx.database.db);
    this.targets.clear();
    for (const row of rows) this.targets.set(row.id, row);
  }

  private startWaiting(targetId: string): void {
    const queue = this.waiting.get(targetId);
    const limit = this.ctx.config.webhookTargetConcurrency;
    while (
      queue &&
      queue.length > 0 &&
      (this.runningPerTarget.get(targetId) ?? 0) < limit &&
      this.running < this.ctx.config.webhookConcurrency &&
      !this.stopped
    ) {
      const held = queue.shift()!;
      this.waitingCount--;
      this.runningPerTarget.set(targetId, (this.runningPerTarget.get(targetId) ?? 0) + 1);
      this.running++;
      const task = this.attempt(held, this.cancelAll.signal)
        .catch((err: unknown) => this.ctx.logger.error({ err, deliveryId: held.job.id }, 'delivery attempt crashed'))
        .finally(() => {
          this.tasks.delete(task);
          this.running--;
          const left = (this.runningPerTarget.get(targetId) ?? 1) - 1;
          if (left === 0) this.runningPerTarget.delete(targetId);
          else this.runningPerTarget.set(targetId, left);
          // A freed slot goes to this target's next job, or, when the process-wide limit held others back, theirs.
          this.startWaiting(targetId);
          for (const other of this.waiting.keys()) if (this.running < this.ctx.config.webhookConcurrency) this.startWaiting(other);
          this.kick();
        });
      this.tasks.add(task);
    }
    if (queue && queue.length === 0) this.waiting.delete(targetId);
  }

  private async attempt(held: Held, signal: AbortSignal): Promise<void> {
    const { job } = held;
    const target = held.target ?? this.targets.get(job.webhook_id);
    const leaseLeft = this.ctx.config.webhookLeaseSeconds * 1000 - (Date.now() - held.claimedAt);
    // Deleted or disabled since the claim, or waited so long the lease could lapse mid-attempt: hand it back unused.
    if (!target || !target.enabled || leaseLeft < this.ctx.config.webhookTimeoutMs) {
      await this.release([job.id]);
      return;
    }
    const startedAt = this.ctx.clock.now();
    const timestamp = Math.floor(startedAt / 1000);
    let secrets: string[];
    try {
      secrets = this.secretsFor(target, startedAt);
    } catch (err) {
      // Our failure, not the receiver's: it must not use up an attempt.
      this.ctx.logger.error({ err, deliveryId: job.id }, 'cannot open the signing secret');
      await this.release([job.id]);
      return;
    }
    const outcome = await this.sender.send(
      {
        url: target.url,
        body: job.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'svc-webhooks/1',
          'svc-delivery': job.id,
          'svc-timestamp': String(timestamp),
          'svc-signature': signatureHeader(secrets, timestamp, job.body),
        },
      },
      signal,
    );
    if (signal.aborted && this.stopped) {
      await this.release([job.id]);
      return;
    }
    const verdict = classify(outcome);
    const pace = this.pace.get(target.id);
    this.pace.set(target.id, pace === undefined ? outcome.durationMs : 0.8 * pace + 0.2 * outcome.durationMs);
    const record = {
      startedAt,
      durationMs: outcome.durationMs,
      statusCode: outcome.kind === 'response' ? outcome.statusCode : null,
      responseSnippet: outcome.kind === 'response' ? outcome.snippet : '',
    };
    this.metrics?.observeAttempt(verdict.kind === 'delivered' ? 'delivered' : verdict.error.code, outcome.durationMs);
    // The slot frees as soon as the HTTP attempt ends; the result joins the next group commit meanwhile. The job
    // stays `delivering` under this worker's lease until then, so nobody else can take it; if the write never
    // lands (database gone, process killed) the lease expires and the job is delivered again: at least once.
    const written = (err: unknown, applied: boolean): void => {
      if (err) this.ctx.logger.error({ err, deliveryId: job.id }, 'recording the attempt failed; the job is retried when its lease expires');
      else if (!applied) this.ctx.logger.warn({ deliveryId: job.id }, 'lease lost before the attempt was recorded; another worker owns the job');
    };
    if (verdict.kind === 'delivered') {
      this.results.submit({ kind: 'delivered', jobId: job.id, attempt: { ...record, error: null } }, written);
    } else {
      const attemptInRound = job.attempt_count + 1 - job.round_start;
      const delay = nextAttemptDelay(this.ctx.config.webhookRetrySchedule, attemptInRound, verdict.retryAfterSeconds, this.random);
      this.results.submit({ kind: 'failed', jobId: job.id, attempt: { ...record, error: verdict.error }, delayMs: delay }, written);
    }
  }

  /** Opening a sealed secret per attempt is wasted work: keep the plain secrets until the row or the overlap changes. */
  private secretsFor(target: TargetRow, now: number): string[] {
    const overlap = target.previousSecretExpiresAt !== null && now < target.previousSecretExpiresAt;
    const key = `${target.secretSealed}|${overlap ? target.previousSecretSealed : ''}`;
    const cached = this.secrets.get(target.id);
    if (cached?.key === key) return cached.secrets;
    const secrets = signingSecrets(this.ctx, target, now);
    this.secrets.set(target.id, { key, secrets });
    return secrets;
  }

  private async release(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await releaseJobs(this.ctx.database.db, this.ctx.database.caps, ids, this.leaseId).catch((err: unknown) =>
      this.ctx.logger.error({ err }, 'releasing jobs failed; their leases will expire'),
    );
  }

  private async rescue(): Promise<void> {
    try {
      const n = await rescueExpired(this.ctx.database.db, this.ctx.database.caps);
      if (n > 0) {
        this.ctx.logger.warn({ jobs: n }, 'rescued delivery jobs whose lease expired');
        this.refreshDue = true;
        this.kick();
      }
    } catch (err) {
      this.ctx.logger.error({ err }, 'rescuing expired leases failed');
    }
  }

  /** Resolves when nothing is in flight (tests and benchmarks). */
  whenIdle(): Promise<void> {
    if (this.inFlight === 0 && !this.pumping) return this.results.idle();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}
