import type { ClaimedJob } from './queue/claim-jobs.js';
import type { TargetRow } from './targets-store.js';

/**
 * A process's own worker taking the jobs its own writes create, without claiming them: the job is written
 * `delivering` under the worker's lease in the record's transaction and handed over after the commit. A claim
 * per write would be a commit of its own (on SQLite a sync) and a trip through the poll loop; this way a record
 * written by `svc serve` is on its way to the receiver within the same turn of the event loop. A job the worker
 * has no room for is written `pending`, for any worker to claim. If the process dies between the commit and the
 * attempt, the lease expires and the job is rescued like any other: still at least once.
 */
export interface JobHandoff {
  /** Inside the writing transaction: the lease to write a new job of this target under, or null (leave it pending). */
  leaseFor(webhookId: string): { leaseId: string; leaseMs: number } | null;
  /** After the commit: the jobs that were written under that lease, each with its target as the write read it. */
  adopt(jobs: Array<{ job: ClaimedJob; target: TargetRow }>): void;
}

/** Where the running worker, if any, makes itself known to the write path of the same process. */
export interface HandoffSlot {
  current: JobHandoff | null;
}
