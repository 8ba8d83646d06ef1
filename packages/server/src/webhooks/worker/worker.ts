import { setMaxListeners } from 'node:events';
import { brokerHost } from '../../config/brokers.js';
import type { Context } from '../../context.js';
import { OutageBackoff } from '../../db/database-errors.js';
import { nextTurn, ownTurn } from '../../lib/turns.js';
import { decide, type Decision } from '../decision.js';
import type { WebhookMetrics } from '../metrics.js';
import { createOutbox } from '../outbox.js';
import { claimWithRates, type ClaimRequest } from '../queue/claim.js';
import type { JobHandoff } from '../queue/enqueue.js';
import { newLeaseToken, type HeldJob } from '../queue/job.js';
import { rescue } from '../queue/rescue.js';
import { promoteHeld } from '../queue/promote-held.js';
import { enabledTargets, type TargetRow } from '../targets-store.js';
import { attempt, type AttemptDeps, type AttemptFacts, type DeliverySender } from './attempt.js';
import { Completer, type Finished } from './completer.js';
import { isLimited, Scheduler } from './scheduler.js';
import { SecretCache } from './secret-cache.js';
import { Slots, type Held } from './slots.js';

export type { DeliverySender } from './attempt.js';

/** A body from which an attempt starts in a turn of the event loop of its own (run). */
const LARGE_BODY_BYTES = 256 * 1024;

/** The retry times a worker keeps a target (retryDueAt). */
const RETRY_TIMES_PER_TARGET = 8;

/**
 * How far a worker's attempts may run ahead of their results' writes: at this many results, or these bytes of their
 * jobs, not yet written (completer.ts `unwrittenResults`, `unwrittenBytes`), it claims no more, and takes no job from
 * its own process's writes, until the completer has caught up below them. A result waits in memory with its job's body, under its lease, and is
 * lost with the process: a kill sends all of them again. Without a bound, a completer slower than the attempts
 * (PostgreSQL, a receiver failing fast: each failure's retry and count written apart, and the count waiting on a
 * replay's lock of the target) let 40,000-49,000 jobs sit `delivering` with their results unwritten. W4's
 * deliveries leave a few hundred at a time: 25 ms of gathering and a commit at ~6,000 a second.
 */
export const UNWRITTEN_RESULTS_MAX = 2048;
export const UNWRITTEN_BYTES_MAX = 64 * 1024 * 1024;

/**
 * The delivery worker: claims due jobs (scheduler.ts says when and how many), runs their attempts within the
 * concurrency limits (slots.ts), has each attempt's facts decided (decision.ts) and its transition written in
 * batches (completer.ts). Wakes on commit signals, with a slow poll as the fallback; rescues expired leases of dead
 * workers. Takes the jobs of its own process's writes through the JobHandoff the runtime wires to the write path.
 * Time comes from the context's clock, so tests of retries, leases and rescue move it by hand.
 */
export class DeliveryWorker implements JobHandoff {
  private readonly slots: Slots;
  private readonly scheduler: Scheduler;
  private readonly secrets: SecretCache;
  private readonly completer: Completer;
  private readonly attemptDeps: AttemptDeps;
  private stopped = true;
  /** Aborted when stop()'s grace runs out: cancels every attempt still in flight. */
  private cancelAll = cancelSignal();
  /** Set by wake-ups that name no target and by the poll: re-read the targets and probe idle ones again. */
  private refreshDue = true;
  /** Targets that wake-ups named since the last claim: probed again, though they had nothing due. */
  private readonly woken = new Set<string>();
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private readonly attempts = new Set<Promise<void>>();
  /** When each target whose sealed values would not open was last logged (ms): one error line a target a minute. */
  private readonly unsignableLogged = new Map<string, number>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => Promise<void>) | null = null;
  private idleWaiters: Array<() => void> = [];
  /** A database outage pauses claims (doubling to 2 s) instead of failing at every wake-up; logged once each way. */
  private readonly outage: OutageBackoff;
  private claimsPaused: NodeJS.Timeout | null = null;
  /** A claim when the spent allowance of a rate-limited target is renewed (scheduler.ts nextAllowanceAt), and for when. */
  private allowanceTimer: { timer: NodeJS.Timeout; at: number } | null = null;
  /** When this process's retries fall due, by target (a few times each, RETRY_TIMES_PER_TARGET): marked due then. */
  private readonly retriesDue = new Map<string, number[]>();
  private retryTimer: { timer: NodeJS.Timeout; at: number } | null = null;
  /** Claims stopped because too many results are unwritten (UNWRITTEN_RESULTS_MAX): the completer kicks once below. */
  private heldBackByResults = false;

  constructor(
    private readonly ctx: Context,
    private readonly sender: DeliverySender,
    private readonly metrics: WebhookMetrics | null = null,
    private readonly random: () => number = Math.random,
  ) {
    const { webhookConcurrency: perProcess, webhookTargetConcurrency: perTarget } = ctx.config;
    this.slots = new Slots(perProcess, perTarget);
    this.scheduler = new Scheduler({ perProcess, perTarget });
    this.secrets = new SecretCache(ctx.box);
    this.attemptDeps = {
      sender,
      secrets: this.secrets,
      now: () => ctx.clock.now(),
      leaseSafetyMs: ctx.config.webhookTimeoutMs,
      brokerHost: (name) => brokerHost(ctx.config.brokers, name),
    };
    this.outage = new OutageBackoff(ctx.logger, 'delivery worker');
    // Operational events' jobs are left pending for any worker (no hand-off from inside a completion).
    const outbox = createOutbox(ctx.database, ctx.logger, null);
    this.completer = new Completer(ctx.database.db, ctx.database.caps, {
      now: () => ctx.clock.now(),
      written: (batch, applied) => this.dueAgain(batch, applied),
      settled: () => {
        if (this.heldBackByResults && !this.resultsBehind()) {
          this.heldBackByResults = false;
          this.kick();
        }
      },
      logger: ctx.logger,
      degrade: (f, err) => this.degrade(f, err),
      operations: {
        rule: { afterMs: ctx.config.webhookDisableAfterMs, minFailures: ctx.config.webhookDisableMinFailures },
        committed: ({ events }) => {
          for (const e of events) void outbox.committed(e);
          // Every worker re-reads the targets on a wake-up, so one svc disabled stops being attempted everywhere.
          void ctx.database.signal.notify().catch(() => {});
        },
      },
    });
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.refreshDue = true;
    this.cancelAll = cancelSignal();
    const wake = (targets: readonly string[] | null) => {
      if (targets === null) this.refreshDue = true;
      else for (const id of targets) this.woken.add(id);
      this.kick();
    };
    this.unsubscribe = await this.ctx.database.signal.subscribe(wake);
    const rescueEvery = Math.max(1000, Math.min(15_000, (this.ctx.config.webhookLeaseSeconds * 1000) / 4));
    this.timers = [setInterval(() => wake(null), this.ctx.config.webhookPollMs), setInterval(() => void this.rescue(), rescueEvery)];
    await this.rescue();
    this.kick();
  }

  /** Stop claiming; give attempts in flight `graceMs` to finish, then cancel them; every claim and write in progress is awaited. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.claimsPaused) clearTimeout(this.claimsPaused);
    this.claimsPaused = null;
    if (this.allowanceTimer) clearTimeout(this.allowanceTimer.timer);
    this.allowanceTimer = null;
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    this.retryTimer = null;
    this.retriesDue.clear();
    await this.unsubscribe?.().catch(() => {});
    // A claim under way lands its jobs in the slots (or releases them, seeing stopped): wait for it first.
    while (this.pumping) await this.pumping;
    for (const held of this.slots.drain()) this.finish(held.job, { kind: 'not-attempted', reason: 'shutdown' }, null);
    const timer = setTimeout(() => this.cancelAll.abort(), graceMs);
    await Promise.allSettled([...this.attempts]);
    clearTimeout(timer);
    await this.completer.close();
  }

  /**
   * After a completion's commit, the targets it made jobs pending for: an ordered target's next held job of the
   * record (released by the completion of the one before, delivered or dead), and the jobs released unattempted.
   * They are marked due here, as a named wake-up does: no wake-up comes for them, and a claim made while the
   * completion was being written found nothing and marked the target idle. A retry is marked due when its time comes.
   */
  private dueAgain(batch: readonly Finished[], applied: ReadonlySet<string>): void {
    let any = false;
    for (const { job, decision } of batch) {
      if (!applied.has(job.id) && decision.kind !== 'not-attempted') continue;
      if (decision.kind === 'retry') this.retryDueAt(job.webhookId, decision.at);
      // A target not read yet (a job handed over by a write before any refresh) is read: it may order by record.
      const target = this.scheduler.target(job.webhookId);
      const releasesHeld = (decision.kind === 'delivered' || decision.kind === 'dead') && (target === undefined || target.ordering === 'record');
      const released = decision.kind === 'not-attempted' && decision.reason !== 'secret-unavailable' && decision.reason !== 'shutdown';
      if (!releasesHeld && !released) continue;
      this.woken.add(job.webhookId);
      any = true;
    }
    if (any) this.kick();
  }

  /**
   * A retry of this target falls due at `at`: its target is marked due then, by one timer for the earliest of all.
   * Without it, a target whose claim had found nothing due waited for the poll. A target keeps its next few times
   * only; beyond them (many failing jobs), the poll and the retries' own claims find the rest.
   */
  private retryDueAt(targetId: string, at: number): void {
    if (this.stopped) return;
    const times = this.retriesDue.get(targetId) ?? [];
    if (times.length >= RETRY_TIMES_PER_TARGET && at >= times[times.length - 1]!) return;
    times.push(at);
    times.sort((a, b) => a - b);
    if (times.length > RETRY_TIMES_PER_TARGET) times.pop();
    this.retriesDue.set(targetId, times);
    this.armRetryTimer();
  }

  private armRetryTimer(): void {
    if (this.stopped) return;
    let next: number | null = null;
    for (const times of this.retriesDue.values()) if (next === null || times[0]! < next) next = times[0]!;
    if (next === null || (this.retryTimer && this.retryTimer.at <= next)) return;
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    const timer = setTimeout(() => {
      this.retryTimer = null;
      const now = this.ctx.clock.now();
      for (const [id, times] of this.retriesDue) {
        while (times.length > 0 && times[0]! <= now) {
          times.shift();
          this.woken.add(id);
        }
        if (times.length === 0) this.retriesDue.delete(id);
      }
      this.armRetryTimer();
      this.kick();
    }, Math.max(0, next - this.ctx.clock.now()));
    timer.unref();
    this.retryTimer = { timer, at: next };
  }

  /** JobHandoff: a lease for a new job of this process's own write, if its target has room here. */
  leaseFor(webhookId: string): { lease: string; expiresAt: number } | null {
    if (this.stopped || !this.scheduler.hasRoom(webhookId, this.slots) || this.resultsBehind()) return null;
    return { lease: newLeaseToken(), expiresAt: this.ctx.clock.now() + this.ctx.config.webhookLeaseSeconds * 1000 };
  }

  /**
   * JobHandoff: the jobs written under those leases have committed. A job whose target the write read as rate-limited
   * was handed over only because this worker had not seen the limit yet: it goes back to pending unattempted, to be
   * claimed through the bucket like every job of a limited target.
   */
  adopt(jobs: ReadonlyArray<{ job: HeldJob; target: TargetRow }>): void {
    const stale = jobs.filter(({ target }) => isLimited(target));
    for (const { job } of stale) this.finish(job, { kind: 'not-attempted', reason: 'target-unavailable' }, null);
    if (stale.length > 0) this.refreshDue = true;
    const taken = stale.length > 0 ? jobs.filter(({ target }) => !isLimited(target)) : jobs;
    if (this.stopped) {
      for (const { job } of taken) this.finish(job, { kind: 'not-attempted', reason: 'shutdown' }, null);
      return;
    }
    this.hold(taken);
  }

  kick(): void {
    // While claims are paused for an outage, the pause's end kicks.
    if (this.stopped || this.claimsPaused) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      this.armAllowanceTimer();
      if (this.pumpAgain && !this.stopped) {
        this.pumpAgain = false;
        this.kick();
      } else if (this.slots.inFlight === 0) this.idleWaiters.splice(0).forEach((f) => f());
    });
  }

  /** One round of claims now, as a wake-up would run it; resolves when it is done (tests). */
  async claimNow(): Promise<void> {
    this.refreshDue = true;
    this.kick();
    while (this.pumping) await this.pumping;
  }

  /** Resolves when nothing is held or being written (tests and benchmarks). */
  async whenIdle(): Promise<void> {
    if (this.slots.inFlight > 0 || this.pumping) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.completer.idle();
  }

  /** Claims until no target wants more: see Scheduler.plan(). */
  private async pump(): Promise<void> {
    try {
      // Named targets are marked due here, between claims, never while one runs: a claim that began before their jobs
      // committed, finding none, would mark them idle again after the wake-up.
      const named = [...this.woken];
      this.woken.clear();
      // A target this worker has not read yet: read them all.
      if (!this.refreshDue && !this.scheduler.wake(named)) this.refreshDue = true;
      if (this.refreshDue) {
        this.refreshDue = false;
        const rows = await enabledTargets(this.ctx.database.db);
        this.outage.succeeded();
        this.scheduler.setTargets(rows);
        this.secrets.retain(this.scheduler.targetIds());
      }
      for (;;) {
        if (!this.stopped && this.resultsBehind()) {
          this.heldBackByResults = true;
          return;
        }
        const wants = this.stopped ? null : this.scheduler.plan(this.slots, this.ctx.clock.now());
        if (!wants) return;
        // Targets without a limit first, in their one statement as ever; limited ones apart, in their transaction with
        // the buckets: a failure there loses none of the others' jobs, already held.
        let claimed = 0;
        for (const group of [wants.filter((w) => !w.limited), wants.filter((w) => w.limited)]) {
          if (group.length === 0) continue;
          const n = await this.claimGroup(group);
          if (n === null) return;
          claimed += n;
        }
        if (claimed === 0) return;
        // The next round waits for a turn: its claim's statements and the attempts this one started would otherwise
        // follow each other without letting a request in.
        await nextTurn();
      }
    } catch (err) {
      const pause = this.outage.failed(err);
      if (pause === null) this.ctx.logger.error({ err }, 'claiming delivery jobs failed; the poll will try again');
      else this.pauseClaims(pause);
    }
  }

  /** Whether the results not yet written are too many to claim more (UNWRITTEN_RESULTS_MAX, UNWRITTEN_BYTES_MAX). */
  private resultsBehind(): boolean {
    return this.completer.unwrittenResults >= UNWRITTEN_RESULTS_MAX || this.completer.unwrittenBytes >= UNWRITTEN_BYTES_MAX;
  }

  /** Results of this worker's attempts not yet written (tests; see UNWRITTEN_RESULTS_MAX). */
  get unwrittenResults(): number {
    return this.completer.unwrittenResults;
  }

  /** One claim for these targets; the number of jobs it took, or null once the worker is stopping. */
  private async claimGroup(wants: ClaimRequest[]): Promise<number | null> {
    const claims = await claimWithRates(this.ctx.database.db, this.ctx.database.caps, {
      now: this.ctx.clock.now(),
      leaseMs: this.ctx.config.webhookLeaseSeconds * 1000,
      targets: wants,
    });
    this.outage.succeeded();
    this.scheduler.claimed(wants, claims);
    const jobs = claims.flatMap((c) => c.jobs);
    if (this.stopped) {
      for (const job of jobs) this.finish(job, { kind: 'not-attempted', reason: 'shutdown' }, null);
      return null;
    }
    this.hold(jobs.map((job) => ({ job })));
    return jobs.length;
  }

  /**
   * A rate-limited target whose allowance is spent is left out of claims until it is renewed (not claimed at every
   * wake-up): this timer makes the claim then. One timer, for the earliest.
   */
  private armAllowanceTimer(): void {
    if (this.stopped) return;
    const now = this.ctx.clock.now();
    const at = this.scheduler.nextAllowanceAt(now);
    if (at === null || (this.allowanceTimer && this.allowanceTimer.at <= at && this.allowanceTimer.at > now)) return;
    if (this.allowanceTimer) clearTimeout(this.allowanceTimer.timer);
    const timer = setTimeout(() => {
      this.allowanceTimer = null;
      this.kick();
    }, at - now);
    this.allowanceTimer = { timer, at };
  }

  /** No claim until `ms` from now; then one, with the targets read again (the outage may have hidden changes). */
  private pauseClaims(ms: number): void {
    if (this.stopped || this.claimsPaused) return;
    this.refreshDue = true;
    this.claimsPaused = setTimeout(() => {
      this.claimsPaused = null;
      this.kick();
    }, ms);
  }

  private hold(jobs: readonly Held[]): void {
    this.slots.hold(jobs);
    this.startReady();
  }

  private startReady(first?: string): void {
    if (this.stopped) return;
    const ready: Held[] = [];
    // A limited target's claimed jobs go first: its bucket counted them now, so they must start now (a
    // claim takes no more than its free slots, but the process-wide limit can still make them wait for others').
    for (const id of this.scheduler.limitedIds()) if (this.slots.busy(id) > 0) ready.push(...this.slots.takeReady(id));
    ready.push(...this.slots.takeReady(first));
    for (const held of ready) {
      const task = this.run(held)
        .catch((err: unknown) => this.ctx.logger.error({ err, deliveryId: held.job.id }, 'delivery attempt crashed'))
        .finally(() => {
          this.attempts.delete(task);
          this.slots.free(held.job);
          // A freed slot goes to this target's next job, or, when the process-wide limit held others back, theirs.
          this.startReady(held.job.webhookId);
          this.kick();
        });
      this.attempts.add(task);
    }
  }

  private async run(held: Held): Promise<void> {
    const { job } = held;
    // An attempt's start is synchronous up to its first write: the envelope, one HMAC or more over the body, the
    // body handed to the socket (TLS encrypts it there). For a large body that is milliseconds, and the attempts a
    // claim or a write's hand-off starts together ran in one turn, one after another. A large body's attempt starts in
    // a turn of its own. (Four targets of a 1 MB record's update held a SQLite process's loop 250-580 ms on a machine
    // at load average 5-9; on a quiet one 130-160 ms, with this or without it: the write itself.)
    if (job.body.length >= LARGE_BODY_BYTES) await ownTurn();
    const target = held.target ?? this.scheduler.target(job.webhookId);
    const facts = await attempt(job, target, this.attemptDeps, this.cancelAll.signal);
    const decision = this.decide(job, facts);
    if (decision.kind !== 'not-attempted') {
      const outcome = decision.kind === 'delivered' ? 'delivered' : decision.error.code;
      this.scheduler.observe(job.webhookId, facts.durationMs);
      this.metrics?.observeAttempt(outcome, facts.durationMs);
      // One line an attempt at debug level (the attempts' table is the record); a traced one names its span (SPEC §15).
      if (this.ctx.logger.isLevelEnabled('debug')) {
        this.ctx.logger.debug(
          { deliveryId: job.id, webhookId: job.webhookId, attempt: job.attemptCount + 1, outcome, durationMs: Math.round(facts.durationMs), ...facts.span },
          'delivery attempt',
        );
      }
    } else if (decision.reason === 'secret-unavailable') this.logUnsignable(job.webhookId);
    // The slot frees as soon as the HTTP attempt ends; the transition joins the next group commit meanwhile.
    this.finish(job, decision, facts);
  }

  /** A target's jobs wait (completer.ts UNSIGNABLE_DELAY_MS) until its secret opens: the operator has to know why. */
  private logUnsignable(webhookId: string): void {
    const now = this.ctx.clock.now();
    const last = this.unsignableLogged.get(webhookId);
    if (last !== undefined && now - last < 60_000) return;
    if (this.unsignableLogged.size >= 1024) this.unsignableLogged.clear();
    this.unsignableLogged.set(webhookId, now);
    this.ctx.logger.error(
      { webhookId },
      "a sealed value of this target (its secret, its previous secret or its headers) does not open with this process's key; its jobs wait, due again every 60 s: rotate its secret with overlapSeconds 0 and set its headers again",
    );
  }

  private decide(job: HeldJob, facts: AttemptFacts): Decision {
    return decide({
      result: facts.result,
      attemptInRound: job.attemptCount + 1 - job.roundStart,
      schedule: this.ctx.config.webhookRetrySchedule,
      now: this.ctx.clock.now(),
      jitter: this.random(),
    });
  }

  private finish(job: HeldJob, decision: Decision, facts: AttemptFacts | null): void {
    const attempt = {
      startedAt: facts?.startedAt ?? 0,
      durationMs: facts?.durationMs ?? 0,
      statusCode: facts?.result.kind === 'response' ? facts.result.statusCode : null,
      error: null,
      responseSnippet: facts?.snippet ?? '',
      trace: facts?.trace,
    };
    this.completer.submit({ job, decision, attempt });
  }

  /** A result that could not be written as it was: the same attempt, failed, nothing of the answer kept. */
  private degrade(f: Finished, err: unknown): Finished {
    const message = `The attempt's result could not be stored (${(err as { code?: string } | null)?.code ?? 'database error'}).`;
    const decision = decide({
      result: { kind: 'failure', code: 'result_unrecorded', message },
      attemptInRound: f.job.attemptCount + 1 - f.job.roundStart,
      schedule: this.ctx.config.webhookRetrySchedule,
      now: this.ctx.clock.now(),
      jitter: this.random(),
    });
    return { job: f.job, decision, attempt: { ...f.attempt, responseSnippet: '' } };
  }

  private async rescue(): Promise<void> {
    try {
      const n = await rescue(this.ctx.database.db, { now: this.ctx.clock.now() });
      // Ordered targets: a held job whose release was lost (a crash between a completion and its release).
      const promoted = await promoteHeld(this.ctx.database.db, this.ctx.database.caps, { now: this.ctx.clock.now() });
      if (promoted > 0) {
        this.refreshDue = true;
        this.kick();
      }
      if (n > 0) {
        this.ctx.logger.warn({ jobs: n }, 'rescued delivery jobs whose lease expired');
        this.refreshDue = true;
        this.kick();
      }
      this.outage.succeeded();
    } catch (err) {
      // During an outage the claims' backoff logs it; rescue simply runs again at its next turn.
      if (this.outage.failed(err) === null) this.ctx.logger.error({ err }, 'rescuing expired leases failed');
    }
  }
}

/**
 * Every attempt in flight listens to this one signal: up to the process-wide concurrency of listeners, none of them a
 * leak, so without a limit of its own Node would warn of one ("MaxListenersExceededWarning") at the 11th attempt.
 */
function cancelSignal(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
