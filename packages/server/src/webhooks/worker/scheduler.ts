import { CLAIM_MAX_BYTES, type Claimed, type ClaimRequest } from '../queue/claim.js';
import type { TargetRow } from '../targets-store.js';
import type { Slots } from './slots.js';

/**
 * A worker holds about this much of a target's work claimed (at its recent pace, at least two rounds of its
 * concurrency): a fast receiver gets large claims, so claims (each a commit, on SQLite a sync) stay rare per
 * delivery; a slow one gets a few rounds, so other workers' share of its backlog is not hoarded. 200 ms rather than
 * 100: with ten busy targets sharing the slots, half as many claims (W4 SQLite, 10 targets: 1 829 → 897 claim
 * statements, SQLite time −14 %), while four workers sharing one slow target still scale 3.8×.
 */
const CLAIM_HORIZON_MS = 200;
/**
 * At most this many jobs held per target, and this many times the process-wide concurrency in all. A claim is made
 * once a target is down to half its hold, so the half left must last while the claim runs. 1 024 rather than 512: a
 * broker that acknowledges 20,000–30,000 messages a second used up 256 jobs before a PostgreSQL claim of 256 came back
 * (~13 ms), and the worker waited for every claim (W15 Redis, PostgreSQL: 1.31–1.38 → 1.18–1.28 s a drain of 20,000).
 * Earlier, 512 rather than 256: one fast target's claims half as many (W4 PostgreSQL, 1 target: 160 → 80 claim
 * statements). About 200 ms of a 5,000/s target's work, 35–50 ms of a broker's.
 */
const MAX_HOLD_PER_TARGET = 1024;
export const HOLD_ROUNDS = 16;
/**
 * The bodies a process holds at most, running and waiting, in bytes (SPEC §12: the worker's claims are budgeted in
 * bytes). Small jobs never reach it (16 rounds of 64 slots of 1 KB bodies is 1 MiB); ~2 MB ones stop at about 32
 * held. Past it no claim is made until attempts end; a claim, and a hand-off, still takes one job of a target
 * however large it is, so the excess is at most one job per target.
 */
export const HOLD_MAX_BYTES = 64 * 1024 * 1024;

/** The target has a rate limit (SPEC §13): its jobs are claimed through the shared bucket, never handed over. */
export const isLimited = (target: TargetRow): boolean => target.ratePerSecond != null;

/**
 * When to claim and how much: the worker's view of the enabled targets, each one's recent attempt duration, and
 * which had nothing due at the last claim (skipped until a wake-up names them or a refresh, so a busy target's
 * completions and other targets' writes do not probe idle ones).
 *
 * A rate-limited target is claimed apart from the others' rules: only what can start at once (its free slots, and
 * not above its rate), so the slice of a second its bucket counted a job in is the one the job starts in; and once
 * its allowance is spent (claim.ts rateAllowance: a quarter of its rate each quarter-second), not before more is
 * allowed (`spent`), however often the worker wakes. That keeps a limited target with 100,000 jobs due from costing a
 * claim per wake-up: about four claims a second per process while it waits, one a quarter-second, plus one per half
 * of its slots freed while its allowance lasts.
 */
export class Scheduler {
  private readonly targets = new Map<string, TargetRow>();
  /** Per target: recent attempt duration (ms, moving average), to size its claims. */
  private readonly pace = new Map<string, number>();
  private readonly idle = new Set<string>();
  /** Limited targets whose allowance is spent: not planned before this time (ms). Kept across setTargets. */
  private readonly spent = new Map<string, number>();
  private readonly limited = new Set<string>();
  /**
   * The targets in the order plan() walks them, and where the next walk starts: after the last target the previous
   * claim topped up. With more busy targets than the process holds jobs (over HOLD_ROUNDS × perProcess), a claim
   * reaches only some of them, and a walk from the first each time would leave the rest waiting for good.
   */
  private order: string[] = [];
  private nextStart = 0;

  constructor(private readonly limits: { perProcess: number; perTarget: number }) {}

  /** A fresh read of the enabled targets: what is gone is forgotten, and every target may be probed again. */
  setTargets(rows: readonly TargetRow[]): void {
    this.targets.clear();
    for (const row of rows) this.targets.set(row.id, row);
    this.order = [...this.targets.keys()];
    if (this.nextStart >= this.order.length) this.nextStart = 0;
    for (const id of this.pace.keys()) if (!this.targets.has(id)) this.pace.delete(id);
    for (const id of this.spent.keys()) if (!this.targets.has(id)) this.spent.delete(id);
    this.limited.clear();
    for (const row of rows) if (isLimited(row)) this.limited.add(row.id);
    this.idle.clear();
  }

  /** These targets have new jobs: probed again at the next plan. False when one of them is not among those read. */
  wake(targetIds: readonly string[]): boolean {
    let known = true;
    for (const id of targetIds) {
      if (this.targets.has(id)) this.idle.delete(id);
      else known = false;
    }
    return known;
  }

  /** The rate-limited targets among those read last. */
  limitedIds(): ReadonlySet<string> {
    return this.limited;
  }

  /** When the earliest spent allowance of a limited target is renewed, if one is spent at `now`: the worker claims then. */
  nextAllowanceAt(now: number): number | null {
    let next: number | null = null;
    for (const [id, until] of this.spent) if (until > now && this.limited.has(id) && (next === null || until < next)) next = until;
    return next;
  }

  target(id: string): TargetRow | undefined {
    return this.targets.get(id);
  }

  targetIds(): IterableIterator<string> {
    return this.targets.keys();
  }

  observe(targetId: string, durationMs: number): void {
    const pace = this.pace.get(targetId);
    this.pace.set(targetId, pace === undefined ? durationMs : 0.8 * pace + 0.2 * durationMs);
  }

  /**
   * What one claim should ask for, or null when no claim is due: a claim is due once some target is down to half its
   * hold, and while the process holds less than HOLD_MAX_BYTES. The claim's bytes (at most CLAIM_MAX_BYTES, and the
   * room left under HOLD_MAX_BYTES) are shared equally by the targets it tops up. `now` is the worker's clock, for
   * limited targets whose allowance is spent (without it they are planned as if it were not).
   */
  plan(slots: Slots, now?: number): ClaimRequest[] | null {
    const { perProcess, perTarget } = this.limits;
    const bytesRoom = HOLD_MAX_BYTES - slots.heldBytes;
    if (bytesRoom <= 0) return null;
    // Every target with a quarter of its hold or more to fill is topped up in the same claim: one commit (on SQLite
    // one sync) for all of them, rather than one per target each time it runs low.
    const wants: ClaimRequest[] = [];
    let due = false;
    let room = HOLD_ROUNDS * perProcess - slots.inFlight;
    const n = this.order.length;
    let last = -1;
    for (let k = 0; k < n; k++) {
      if (room <= 0) break;
      const i = (this.nextStart + k) % n;
      const target = this.targets.get(this.order[i]!)!;
      if (!target.enabled || this.idle.has(target.id)) continue;
      const busy = slots.busy(target.id);
      if (isLimited(target)) {
        if (now !== undefined && (this.spent.get(target.id) ?? 0) > now) continue;
        const rate = target.ratePerSecond!;
        const limit = Math.min(perTarget - busy, room, rate);
        // Half its slots at a time (or its whole rate, when that is less), not a claim per slot freed.
        if (limit < Math.min(Math.ceil(perTarget / 2), rate)) continue;
        wants.push({ webhookId: target.id, limit, limited: true });
        room -= limit;
        due = true;
        last = i;
        continue;
      }
      const hold = this.holdFor(target.id);
      if (hold - busy < hold / 4) continue;
      // Near the process-wide limit, wait for room for a useful claim rather than claim a job or two at a time.
      if (room < Math.min(perTarget, hold - busy)) continue;
      const limit = Math.min(room, hold - busy);
      wants.push({ webhookId: target.id, limit });
      room -= limit;
      last = i;
      if (busy <= hold / 2) due = true;
    }
    if (!due) return null;
    this.nextStart = n === 0 ? 0 : (last + 1) % n;
    const maxBytes = Math.floor(Math.min(CLAIM_MAX_BYTES, bytesRoom) / wants.length);
    return wants.map((w) => ({ ...w, maxBytes }));
  }

  /**
   * After a claim: targets that had nothing due wait for the next wake-up; limited ones whose allowance is spent wait
   * until it is renewed.
   */
  claimed(wants: readonly ClaimRequest[], results: readonly Claimed[]): void {
    results.forEach((r, i) => {
      const id = wants[i]!.webhookId;
      if (r.spentUntil !== null) this.spent.set(id, r.spentUntil);
      else if (r.jobs.length === 0) this.idle.add(id);
    });
  }

  /**
   * Whether a new job of this target fits here now (the hand-off asks, with the same limits as a claim). Never for a
   * limited target: a handed-over job would start without taking from its bucket.
   */
  hasRoom(targetId: string, slots: Slots): boolean {
    if (this.limited.has(targetId)) return false;
    return slots.inFlight < HOLD_ROUNDS * this.limits.perProcess && slots.heldBytes < HOLD_MAX_BYTES && slots.busy(targetId) < this.holdFor(targetId);
  }

  private holdFor(targetId: string): number {
    const { perProcess, perTarget } = this.limits;
    const ms = this.pace.get(targetId);
    // The slots this target actually gets: its own limit, or its share of the process-wide one when many are busy.
    const active = Math.max(1, this.targets.size - this.idle.size);
    const slots = Math.min(perTarget, perProcess / active);
    const paced = ms === undefined ? 0 : Math.ceil((slots * CLAIM_HORIZON_MS) / Math.max(ms, 0.5));
    // Nor more than its share of what the process holds in all: past it, every busy target would count as low at
    // once and each few freed slots would make a claim of a few jobs (W4, ten targets: 435 claims of 46 jobs).
    const share = Math.max(2 * slots, Math.floor((HOLD_ROUNDS * perProcess) / active));
    // A whole number of jobs, and at least one: past HOLD_ROUNDS × perProcess busy targets the share is below one, and
    // a claim's limit is an integer bound of its statement (SQLite refused 0.0128 as a LIMIT, PostgreSQL too).
    return Math.max(1, Math.floor(Math.min(MAX_HOLD_PER_TARGET, Math.max(2 * perTarget, paced), share)));
  }
}
