import { randomBytes } from 'node:crypto';
import type { Context } from '../context.js';
import { nextAttemptDelay } from './backoff.js';
import type { AttemptOutcome, DeliveryRequest } from './http-client.js';
import { classify } from './outcome.js';
import { claimJobs, type ClaimedJob } from './queue/claim-jobs.js';
import { completeJob } from './queue/complete-job.js';
import { failJob } from './queue/fail-job.js';
import { releaseJobs } from './queue/release-jobs.js';
import { rescueExpired } from './queue/rescue-expired.js';
import { signatureHeader } from './signing.js';
import { enabledTargets, type TargetRow } from './targets-store.js';
import { signingSecrets } from './targets.js';
import type { WebhookMetrics } from './metrics.js';
import { ResultWriter } from './result-writer.js';

export interface DeliverySender {
  send(req: DeliveryRequest, signal?: AbortSignal): Promise<AttemptOutcome>;
}

interface Held {
  job: ClaimedJob;
  claimedAt: number;
}

/**
 * Claims due jobs and runs their attempts, at most `webhookConcurrency` at once and at most
 * `webhookTargetConcurrency` per target, so one slow receiver cannot take every slot. Wakes on commit
 * signals, with a slow poll as the fallback; rescues expired leases of dead workers.
 */
export class DeliveryWorker {
  private readonly leaseId = `lease_${randomBytes(12).toString('base64url')}`;
  private readonly running = new Map<string, AbortController>();
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
    this.results = new ResultWriter(ctx.database.db);
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.refreshDue = true;
    const wake = () => {
      this.refreshDue = true;
      this.kick();
    };
    this.unsubscribe = await this.ctx.database.signal.subscribe(wake);
    this.pollTimer = setInterval(wake, this.ctx.config.webhookPollMs);
    const rescueEvery = Math.max(1000, Math.min(15_000, (this.ctx.config.webhookLeaseSeconds * 1000) / 4));
    this.rescueTimer = setInterval(() => void this.rescue(), rescueEvery);
    await this.rescue();
    this.kick();
  }

  /** Stop claiming; give in-flight attempts `graceMs` to finish, then abort them and release their jobs. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.rescueTimer) clearInterval(this.rescueTimer);
    await this.unsubscribe?.().catch(() => {});
    const waitingIds = [...this.waiting.values()].flat().map((h) => h.job.id);
    this.waiting.clear();
    this.waitingCount = 0;
    await this.release(waitingIds);
    const done = Promise.allSettled([...this.tasks]);
    const timer = setTimeout(() => this.running.forEach((c) => c.abort()), graceMs);
    await done;
    clearTimeout(timer);
    await this.results.idle();
  }

  get inFlight(): number {
    return this.running.size + this.waitingCount;
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
   * Claims per target, each claim asking for just the slots that target has free. A target is topped up to two
   * rounds (running + waiting) once it drops below one, so claims happen about once per round, not per delivery.
   * Targets that had nothing due are skipped until the next wake-up or poll, so a busy target's completions do not
   * probe idle ones.
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
    while (!this.stopped) {
      let claimed = 0;
      for (const target of this.targets.values()) {
        // Up to one more round may wait behind the attempts in flight, so slots refill without a claim each.
        const room = 2 * webhookConcurrency - this.inFlight;
        if (room <= 0 || this.stopped) return;
        const busy = (this.runningPerTarget.get(target.id) ?? 0) + (this.waiting.get(target.id)?.length ?? 0);
        if (!target.enabled || busy >= perTarget || this.idleTargets.has(target.id)) continue;
        let jobs: ClaimedJob[];
        try {
          jobs = await claimJobs(this.ctx.database.db, this.ctx.database.caps, {
            leaseId: this.leaseId,
            leaseMs: this.ctx.config.webhookLeaseSeconds * 1000,
            limit: Math.min(room, 2 * perTarget - busy),
            webhookId: target.id,
          });
        } catch (err) {
          this.ctx.logger.error({ err }, 'claiming delivery jobs failed; the poll will try again');
          return;
        }
        if (jobs.length === 0) {
          this.idleTargets.add(target.id);
          continue;
        }
        claimed += jobs.length;
        const now = Date.now();
        const queue = this.waiting.get(target.id) ?? [];
        for (const job of jobs) queue.push({ job, claimedAt: now });
        this.waiting.set(target.id, queue);
        this.waitingCount += jobs.length;
        this.startWaiting(target.id);
      }
      if (claimed === 0) return;
    }
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
      this.running.size < this.ctx.config.webhookConcurrency &&
      !this.stopped
    ) {
      const held = queue.shift()!;
      this.waitingCount--;
      this.runningPerTarget.set(targetId, (this.runningPerTarget.get(targetId) ?? 0) + 1);
      const controller = new AbortController();
      this.running.set(held.job.id, controller);
      const task = this.attempt(held, controller.signal)
        .catch((err: unknown) => this.ctx.logger.error({ err, deliveryId: held.job.id }, 'delivery attempt crashed'))
        .finally(() => {
          this.tasks.delete(task);
          this.running.delete(held.job.id);
          const left = (this.runningPerTarget.get(targetId) ?? 1) - 1;
          if (left === 0) this.runningPerTarget.delete(targetId);
          else this.runningPerTarget.set(targetId, left);
          // A freed slot goes to this target's next job, or, when the process-wide limit held others back, theirs.
          this.startWaiting(targetId);
          for (const other of this.waiting.keys()) if (this.running.size < this.ctx.config.webhookConcurrency) this.startWaiting(other);
          this.kick();
        });
      this.tasks.add(task);
    }
    if (queue && queue.length === 0) this.waiting.delete(targetId);
  }

  private async attempt(held: Held, signal: AbortSignal): Promise<void> {
    const { job } = held;
    const { caps } = this.ctx.database;
    const target = this.targets.get(job.webhook_id);
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
    const record = {
      startedAt,
      durationMs: outcome.durationMs,
      statusCode: outcome.kind === 'response' ? outcome.statusCode : null,
      responseSnippet: outcome.kind === 'response' ? outcome.snippet : '',
    };
    this.metrics?.observeAttempt(verdict.kind === 'delivered' ? 'delivered' : verdict.error.code, outcome.durationMs);
    let write: Promise<boolean>;
    if (verdict.kind === 'delivered') {
      write = this.results.submit((trx) => completeJob(trx, caps, job.id, this.leaseId, { ...record, error: null }));
    } else {
      const attemptInRound = job.attempt_count + 1 - job.round_start;
      const delay = nextAttemptDelay(this.ctx.config.webhookRetrySchedule, attemptInRound, verdict.retryAfterSeconds, this.random);
      write = this.results.submit((trx) => failJob(trx, caps, job.id, this.leaseId, { ...record, error: verdict.error }, delay));
    }
    // The slot frees as soon as the HTTP attempt ends; the result joins the next group commit meanwhile. The job
    // stays `delivering` under this worker's lease until then, so nobody else can take it; if the write never
    // lands (database gone, process killed) the lease expires and the job is delivered again: at least once.
    void write.then(
      (applied) => {
        if (!applied) this.ctx.logger.warn({ deliveryId: job.id }, 'lease lost before the attempt was recorded; another worker owns the job');
      },
      (err: unknown) => this.ctx.logger.error({ err, deliveryId: job.id }, 'recording the attempt failed; the job is retried when its lease expires'),
    );
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
