import type { Kysely } from 'kysely';
import type { DeliveredJob, DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import type { AttemptRecord, HeldRef } from './job.js';
import { promoteHeld } from './promote-held.js';
import type { DeliveryId } from '../../lib/ids.js';

export interface Completion {
  job: HeldRef;
  attempt: AttemptRecord;
}

/**
 * delivering → delivered for a batch of jobs, each still under the lease of the claim it names, with the attempts
 * that did it. Returns the ids it applied to; a job whose lease was lost is left alone and keeps no attempt.
 * The next held job of each record of an ordered target is then released (promoteHeld; only for jobs marked `ordered`).
 *
 * The delivering attempt is written on the job row by the same update (its `success_*` columns, migration 020; its
 * number is the job's new `attempt_count`), not as an attempt row: the view `delivery_attempts` shows it beside the
 * rows of failed attempts. Each attempt travels with its (id, lease), so only the entry whose lease is the row's can
 * match, even for a job twice in one batch (an old claim's result and the new claim's). The statement is the
 * database's (db/dialects/<db>/jobs.ts `delivered`), of one text whatever the batch size; the failing streaks of
 * the targets end with it.
 */
export async function complete(db: Kysely<Tables>, caps: DialectCapabilities, opts: { now: number; done: readonly Completion[] }): Promise<Set<DeliveryId>> {
  const { now, done } = opts;
  if (done.length === 0) return new Set();
  const rows = done.map(({ job, attempt }): DeliveredJob => {
    const t = attempt.trace?.timings;
    return {
      id: job.id,
      lease: job.lease,
      startedAt: attempt.startedAt,
      durationMs: Math.round(attempt.durationMs),
      statusCode: attempt.statusCode,
      snippet: attempt.responseSnippet,
      remoteAddress: attempt.trace?.remoteAddress ?? null,
      dnsMs: t?.dnsMs ?? null,
      connectMs: t?.connectMs ?? null,
      tlsMs: t?.tlsMs ?? null,
      firstByteMs: t?.firstByteMs ?? null,
    };
  });
  const applied = await caps.jobs.delivered(db, now, rows, (trx, finished) => promoteHeld(trx, caps, { now, after: orderedOf(finished) }).then(() => {}));
  return new Set(applied.map((r) => r.id as DeliveryId));
}

/**
 * The finished jobs whose records may have a held job waiting: only a job marked `ordered` holds its record's place
 * (migration 011), so the others' completions skip promoteHeld's statement (on PostgreSQL a round trip a batch).
 */
const orderedOf = (rows: ReadonlyArray<{ id: string; ordered: number }>): string[] => rows.filter((r) => Number(r.ordered) === 1).map((r) => r.id);
