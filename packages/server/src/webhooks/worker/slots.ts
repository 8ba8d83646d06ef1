import type { HeldJob } from '../queue/job.js';
import type { TargetRow } from '../targets-store.js';

/** A job this worker holds, waiting for a slot or in its attempt. */
export interface Held {
  job: HeldJob;
  /** Handed-over jobs bring the target row their write read; claimed ones use the worker's view. */
  target?: TargetRow;
}

/**
 * Concurrency: at most `perProcess` attempts at once, and at most `perTarget` of one target, so one slow receiver
 * cannot take every slot. Held jobs wait in a queue per target until a slot is theirs. The bytes of every job held
 * here (running or waiting: its body) are counted, for the scheduler's byte budget.
 */
export class Slots {
  private running = 0;
  private readonly runningByTarget = new Map<string, number>();
  private readonly waiting = new Map<string, Held[]>();
  private waitingCount = 0;
  private bytes = 0;

  constructor(
    private readonly perProcess: number,
    private readonly perTarget: number,
  ) {}

  /** Jobs held here: running or waiting. */
  get inFlight(): number {
    return this.running + this.waitingCount;
  }

  /** The bodies of the jobs held here, running or waiting, in bytes. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** This target's jobs held here, running or waiting. */
  busy(targetId: string): number {
    return (this.runningByTarget.get(targetId) ?? 0) + (this.waiting.get(targetId)?.length ?? 0);
  }

  hold(jobs: readonly Held[]): void {
    for (const held of jobs) {
      const queue = this.waiting.get(held.job.webhookId);
      if (queue) queue.push(held);
      else this.waiting.set(held.job.webhookId, [held]);
      this.waitingCount++;
      this.bytes += held.job.body.length;
    }
  }

  /**
   * Every waiting job that may start now, its slot taken: the freed target's own first, then the others in turn, so a
   * process-wide limit that held some targets back lets them in as slots free.
   */
  takeReady(first?: string): Held[] {
    const ready: Held[] = [];
    const order = first !== undefined && this.waiting.has(first) ? [first, ...this.waiting.keys()] : [...this.waiting.keys()];
    for (const targetId of order) {
      const queue = this.waiting.get(targetId);
      while (queue && queue.length > 0 && this.running < this.perProcess && (this.runningByTarget.get(targetId) ?? 0) < this.perTarget) {
        ready.push(queue.shift()!);
        this.waitingCount--;
        this.running++;
        this.runningByTarget.set(targetId, (this.runningByTarget.get(targetId) ?? 0) + 1);
      }
      if (queue?.length === 0) this.waiting.delete(targetId);
      if (this.running >= this.perProcess) break;
    }
    return ready;
  }

  /** An attempt of this job ended: its slot is free, and its bytes no longer held here. */
  free(job: Pick<HeldJob, 'webhookId' | 'body'>): void {
    const targetId = job.webhookId;
    this.bytes -= job.body.length;
    this.running--;
    const left = (this.runningByTarget.get(targetId) ?? 1) - 1;
    if (left === 0) this.runningByTarget.delete(targetId);
    else this.runningByTarget.set(targetId, left);
  }

  /** Everything still waiting, removed (to be released on shutdown). */
  drain(): Held[] {
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    this.waitingCount = 0;
    for (const held of all) this.bytes -= held.job.body.length;
    return all;
  }
}
