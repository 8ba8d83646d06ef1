import { sql, type Kysely } from 'kysely';
import type { ClaimRow, DialectCapabilities } from '../../db/dialects/types.js';
import type { Tables } from '../../db/tables.js';
import { nextTurn } from '../../lib/turns.js';
import { tracing } from '../../tracing/tracing.js';
import { envelopeBytes } from '../envelope.js';
import { newLeaseToken, type HeldJob } from './job.js';
import type { DeliveryId, WebhookId } from '../../lib/ids.js';

/** How many due jobs of one target to take, and how many bytes of them. */
export interface ClaimRequest {
  webhookId: string;
  limit: number;
  /**
   * The jobs' bytes (each its payload and JOB_OVERHEAD_BYTES) this claim may take for the target: its oldest due
   * jobs while their running sum fits, and always the first, however large. Default CLAIM_MAX_BYTES.
   */
  maxBytes?: number;
  /**
   * The target has a rate limit (SPEC §13 `rateLimit`), as the caller last read it: its claim takes from the bucket
   * every process shares (takeFromBuckets). Without it the statement claims only while the target has no limit, so a
   * worker that has not yet seen a new limit claims nothing for it rather than bypass the bucket.
   */
  limited?: boolean;
}

/** What a claim took for each target asked, and for a rate-limited one whether its second's allowance ran out. */
export interface Claimed {
  jobs: HeldJob[];
  /** A limited target whose allowance is spent for now: when more may be taken (ms; rateAllowance). Else null. */
  spentUntil: number | null;
}

/**
 * A claim's bytes when the caller names no budget (SPEC §12: claims are budgeted in bytes as they are read). With
 * ~2 MB payloads (a 1 MiB record's update event) a claim of 512 jobs would otherwise hold 1 GB. 8 MiB, not more:
 * SQLite reads a claim's payloads on the main thread, and a claim of 16 such jobs (32 MiB) took 350-600 ms on a
 * loaded two-core machine, 4 of them (8 MiB) 26-56 ms. Small jobs never meet it (512 jobs of 1 KB are 0.6 MiB).
 */
export const CLAIM_MAX_BYTES = 8 * 1024 * 1024;
/** What a job costs besides its payload: its envelope's other members, and the held job's own objects. */
export const JOB_OVERHEAD_BYTES = 256;

/**
 * Targets per claim of the driver. SQLite refuses a compound SELECT of more than 500 parts
 * (SQLITE_MAX_COMPOUND_SELECT); a claim for more targets than this is one driver claim per group, in one transaction.
 */
export const CLAIM_TARGETS_PER_STATEMENT = 100;

/**
 * pending → delivering: for each target asked, up to `limit` of its oldest due jobs (returned in no set order), under
 * one fresh lease token for this claim. One claim of the database's driver for all the targets (up to
 * CLAIM_TARGETS_PER_STATEMENT; JobsDriver.claim): on PostgreSQL one statement and one round trip, on SQLite three
 * statements in one write transaction; one commit either way (on SQLite one sync). Results come in the order asked.
 * Rate-limited targets (`limited`) are claimed apart, in a transaction with their buckets: see claimWithRates.
 */
export async function claim(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { now: number; leaseMs: number; targets: readonly ClaimRequest[] },
): Promise<HeldJob[][]> {
  return (await claimWithRates(db, caps, opts)).map((c) => c.jobs);
}

/**
 * claim, with what each rate-limited target's bucket said. Targets without a limit cost what they would without
 * limits anywhere: the driver's claim alone, no bucket read. Limited ones take one transaction between them: their
 * buckets read and locked (takeFromBuckets), at most each one's allowance left (rateAllowance) claimed, and what was
 * really claimed counted (countStarts). The unlimited part runs first and on its own, so a failure of the limited part
 * loses none of its jobs only if the caller claims the two apart (the worker does).
 */
export async function claimWithRates(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  opts: { now: number; leaseMs: number; targets: readonly ClaimRequest[] },
): Promise<Claimed[]> {
  if (opts.targets.length === 0) return [];
  const lease = newLeaseToken();
  const byTarget = new Map<string, Claimed>(opts.targets.map((t) => [t.webhookId, { jobs: [], spentUntil: null }]));
  const leaseExpiresAt = opts.now + opts.leaseMs;
  const take = (rows: readonly ClaimRow[]) => {
    for (const r of rows) byTarget.get(r[1])?.jobs.push(heldJob(r, lease, leaseExpiresAt));
  };
  const statement = { lease, now: opts.now, leaseMs: opts.leaseMs };
  const free = opts.targets.filter((t) => !t.limited);
  if (free.length > 0) take(await claimRows(db, caps, free, statement));
  const limited = opts.targets.filter((t) => t.limited);
  if (limited.length > 0) {
    await db.transaction().execute(async (trx) => {
      const buckets = await takeFromBuckets(trx, caps, limited.map((t) => t.webhookId), opts.now);
      // A target whose row has no limit any more (the caller's view is stale) is claimed as an unlimited one.
      const asked = limited.flatMap((t): ClaimRequest[] => {
        const bucket = buckets.get(t.webhookId);
        if (!bucket) return [{ ...t, limited: false }];
        return bucket.left > 0 ? [{ ...t, limit: Math.min(t.limit, bucket.left) }] : [];
      });
      if (asked.length > 0) take(await claimRows(trx, caps, asked, statement, true));
      const counts = new Map<string, number>();
      for (const t of limited) if (buckets.has(t.webhookId)) counts.set(t.webhookId, byTarget.get(t.webhookId)!.jobs.length);
      await countStarts(trx, buckets, counts);
      for (const [id, bucket] of buckets) {
        const n = counts.get(id)!;
        if (n >= bucket.left) byTarget.get(id)!.spentUntil = bucket.nextAt(n);
      }
    });
  }
  return opts.targets.map((t) => byTarget.get(t.webhookId)!);
}

/**
 * The driver's claims for these targets, CLAIM_TARGETS_PER_STATEMENT at a time. Outside a transaction each group is a
 * claim of its own (on SQLite its own transaction and commit), and the event loop turns between two: a worker with
 * 1,000 targets due claimed them in one transaction of ten groups (on a machine at load average 5-9 the loop was
 * held 200-300 ms at a time; on a quiet one no /healthz over 82 ms, with this or without it). A group that fails
 * leaves the groups before it claimed: their jobs wait for their lease to run out.
 */
async function claimRows(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  targets: readonly ClaimRequest[],
  statement: { lease: string; now: number; leaseMs: number },
  inTransaction = false,
): Promise<ClaimRow[]> {
  const asked = targets.map((t) => ({ webhookId: t.webhookId, limit: t.limit, maxBytes: t.maxBytes ?? CLAIM_MAX_BYTES, limited: t.limited === true }));
  // Only a process that traces reads the write's trace context (migration 019; SPEC §15: nothing measurable when off).
  const withTrace = tracing() !== null;
  const rows: ClaimRow[] = [];
  for (let i = 0; i < asked.length; i += CLAIM_TARGETS_PER_STATEMENT) {
    if (i > 0 && !inTransaction) await nextTurn();
    rows.push(...(await caps.jobs.claim(db, { ...statement, targets: asked.slice(i, i + CLAIM_TARGETS_PER_STATEMENT), overheadBytes: JOB_OVERHEAD_BYTES, withTrace })));
  }
  return rows;
}

/**
 * Each second's allowance is given in this many equal slices, and a slice's share not taken in it is lost: at most
 * ceil(perSecond / 4) start in a second's first quarter, ceil(perSecond / 2) by its half, and so on. Fixed one-second
 * windows alone keep any 10 s window to at most 11 of them (the SPEC's perSecond × 10 × 1.1) only if every job
 * reaches its receiver within the second it was counted in: with a backlog a second's jobs go out in one burst at its
 * start, and a closed 10 s window from one burst to the burst ten seconds later held exactly 220 of the 220 allowed at
 * 20/s, and 223-224 once the machine was loaded (a claim's jobs reaching the receiver later than the next one's). Any
 * 10 s window spans at most 41 quarter-seconds: 10.25 × perSecond (205 at 20/s), whatever the backlog did before (a
 * share carried over would let a backlog that appears mid-second take a whole second's worth at once: 220 again).
 * The rest of the SPEC's margin absorbs those delays: in half-seconds (10.5 ×) the busiest window measured 210-220 at
 * a load average of 10-13 on two cores, at the bound. The cost: up to four claims a second per process (one
 * transaction for all its limited targets whose slice ended) while a backlog waits, instead of one.
 */
export const RATE_SLICES = 4;

/** What a limited target may still take at `now`, from its bucket as stored (migration 015: `rate_window`, `rate_used`). */
export interface Allowance {
  /** The Unix second the claim counts in, and what counts as used in it before this claim. */
  second: number;
  used: number;
  /** What this claim may take. */
  left: number;
  /** When more may be taken once `taken` were: the next slice's start, or the next second's once perSecond is used. */
  nextAt(taken: number): number;
}

/**
 * A pure function of the stored bucket and the clock, so it can be tested against any sequence of claims. The bucket
 * counts a second's starts; from the start of slice j the earlier slices' shares count as used whether they were or
 * not (`used` is at least their sum), which is how one counter per second gives each slice its own share.
 */
export function rateAllowance(perSecond: number, bucket: { window: number | null; used: number }, now: number): Allowance {
  const second = Math.floor(now / 1000);
  const slice = Math.min(RATE_SLICES - 1, Math.floor(((now - second * 1000) * RATE_SLICES) / 1000));
  const share = (slices: number) => Math.ceil((perSecond * slices) / RATE_SLICES);
  // A bucket already in a later second (another process's clock a little ahead) counts against this one: never more
  // than the limit in any second, whichever clock names it.
  const counted = bucket.window !== null && bucket.window >= second ? bucket.used : 0;
  const used = Math.max(counted, share(slice));
  const nextSlice = second * 1000 + Math.ceil(((slice + 1) * 1000) / RATE_SLICES);
  return {
    second: Math.max(second, bucket.window ?? second),
    used,
    left: Math.max(0, share(slice + 1) - used),
    nextAt: (taken) => (used + taken >= perSecond || slice === RATE_SLICES - 1 ? (second + 1) * 1000 : nextSlice),
  };
}

/**
 * Reads and locks the buckets of these targets that have a limit (PostgreSQL `for update`, in id order so two claims
 * never wait on each other crosswise; SQLite's transactions begin immediate: the writer lock is held already). Lives
 * here rather than in a file of its own: queue/ holds the transitions, and the bucket is only ever taken by a claim.
 */
async function takeFromBuckets(trx: Kysely<Tables>, caps: DialectCapabilities, ids: readonly string[], now: number): Promise<Map<string, Allowance>> {
  const lock = caps.forUpdate();
  const { rows } = await sql<{ id: string; rate_per_second: number | string; rate_window: number | string | null; rate_used: number }>`
    select id, rate_per_second, rate_window, rate_used from webhooks
     where id in (${sql.join(ids)}) and rate_per_second is not null
     order by id ${lock}`.execute(trx);
  return new Map(
    rows.map((r) => [r.id, rateAllowance(Number(r.rate_per_second), { window: r.rate_window === null ? null : Number(r.rate_window), used: r.rate_used }, now)]),
  );
}

/** Counts the jobs each limited target's claim really took (an unused allowance is not counted), under the same lock. */
async function countStarts(trx: Kysely<Tables>, buckets: ReadonlyMap<string, Allowance>, counts: ReadonlyMap<string, number>): Promise<void> {
  for (const [id, n] of counts) {
    const bucket = buckets.get(id)!;
    if (n === 0) continue;
    await sql`update webhooks set rate_window = ${bucket.second}, rate_used = ${bucket.used + n} where id = ${id}`.execute(trx);
  }
}

function heldJob(r: ClaimRow, lease: string, leaseExpiresAt: number): HeldJob {
  const [id, webhookId, topic, collection, recordId, attemptCount, roundStart, payload, trace] = r;
  return {
    // The database's edge: the job's columns hold only ids of their kind.
    id: id as DeliveryId,
    webhookId: webhookId as WebhookId,
    lease,
    leaseExpiresAt,
    attemptCount,
    roundStart,
    // Every job's event has its payload (enqueue.ts, migration 003); 'null' only if a row was made by hand.
    body: envelopeBytes({ id, topic, collection, record_id: recordId }, payload ?? 'null'),
    // Only a traced event's job carries its context (migration 019): an untraced one is the job it always was.
    ...(trace !== null ? storedTrace(trace) : {}),
  };
}

/** The two columns read as one value: a traceparent has no space in it, a tracestate may have (optional whitespace). */
function storedTrace(trace: string): { traceparent: string; tracestate: string | null } {
  const space = trace.indexOf(' ');
  const tracestate = trace.slice(space + 1);
  return { traceparent: trace.slice(0, space), tracestate: tracestate === '' ? null : tracestate };
}
