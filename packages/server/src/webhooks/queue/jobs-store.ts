import { SqliteAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { DialectCapabilities } from '../../db/dialects/types.js';
import { jobStateArms } from '../../db/job-state-arms.js';
import type { DeliveryJobsTable, JobState, Tables } from '../../db/tables.js';
import { idFloorAt } from '../../lib/ids.js';
import { envelopeOf } from '../envelope.js';

/** Reads of the queue for the admin API and metrics; transitions live in their own files. */

/** What the admin's deliveries list can be narrowed by (SPEC §4, §17); every member is validated by the route. */
export interface JobFilter {
  webhookId?: string;
  state?: JobState;
  recordId?: string;
  eventId?: string;
  topics?: readonly string[];
  /** Bounds on `created_at`, inclusive, in Unix ms. */
  since?: number;
  until?: number;
}

/** A job as the admin API lists it: the row, and whether its target is disabled now (`heldBy`, SPEC §17). */
export type ListedJob = DeliveryJobsTable & { target_enabled: number | null };

export async function listJobs(db: Kysely<Tables>, filter: JobFilter, afterId: string | null, limit: number): Promise<ListedJob[]> {
  return listJobsQuery(db, filter, afterId, limit).execute();
}

/**
 * Jobs with their target's `enabled`, read per row returned (a subquery on the primary key of `webhooks`): it does not
 * change how the jobs are found, and costs one probe per row of the page, never one per row examined.
 */
const jobsWithTarget = (db: Kysely<Tables>) =>
  db
    .selectFrom('delivery_jobs')
    .selectAll('delivery_jobs')
    .select((eb) => eb.selectFrom('webhooks as w').select('w.enabled').whereRef('w.id', '=', 'delivery_jobs.webhook_id').as('target_enabled'));

/**
 * How much later than its `created_at` a job's id may say it was made, for `until`'s bound on ids. An id's time is
 * `created_at` or a little later: one millisecond after the job it waits for (an ordered target's, newIdAfter, made
 * by a process whose clock may run ahead), or the last time this process saw if its clock stepped back. A minute
 * covers clocks that NTP keeps; a job made by a process whose clock was off by more is missing from lists bounded
 * by `until` (never from others). Without the bound, `until` a week ago walked every newer job: 153 ms on SQLite and
 * 143 ms on PostgreSQL over 200,000 jobs, 1–3 ms with it (the data of test/integration/admin-api-17-plans.test.ts).
 */
const UNTIL_ID_SLACK_MS = 60_000;

/**
 * The query alone, so its plan can be checked. Newest first, each filter written so an index can serve it: `recordId`
 * by `delivery_jobs_record` (migration 016), `eventId` by `delivery_jobs_event_target` (008), `webhookId` by
 * `delivery_jobs_webhook`, `state` by the partial indexes of 003. `since` and `until` are also bounds on the primary
 * key, since ids sort by creation time: an id's time is never earlier than its `created_at` (lib/ids.ts idFloorAt),
 * and at most UNTIL_ID_SLACK_MS later.
 *
 * Topics without any of those keys are read from `delivery_jobs_topic (topic, id)` (migration 025), one arm per
 * topic, each at most `limit` jobs, and the newest `limit` of them kept: a topic with no job, or one job in 1,000,
 * once walked every job (60–210 ms over 200,000; as a list of topics one index range would come unsorted).
 *
 * On PostgreSQL the target's, record's, event's and topic's indexes hold no job being delivered (migrations 021,
 * 025): a list by one of them that does not name a state reads two arms, the jobs those indexes hold and the few in
 * flight, and keeps the newest `limit` of both. SQLite's are whole: one arm.
 */
export function listJobsQuery(db: Kysely<Tables>, filter: JobFilter, afterId: string | null, limit: number) {
  const keyed = filter.webhookId !== undefined || filter.recordId !== undefined || filter.eventId !== undefined;
  const topics = !keyed && filter.topics !== undefined && filter.topics.length > 0 ? [...new Set(filter.topics)] : null;
  const split = (keyed || (topics !== null && !(db.getExecutor().adapter instanceof SqliteAdapter))) && filter.state === undefined;
  const settled = split ? SETTLED : null;
  const arms = topics === null ? [filteredJobs(db, filter, afterId, limit, settled)] : topics.map((topic) => filteredJobs(db, { ...filter, topics: [topic] }, afterId, limit, settled));
  if (split) arms.push(filteredJobs(db, filter, afterId, limit, IN_FLIGHT));
  if (arms.length === 1) return arms[0]!;
  const [first, ...rest] = arms.map((arm, i) => db.selectFrom(arm.as(`a${i}`)).selectAll());
  return db
    .selectFrom(rest.reduce((union, arm) => union.unionAll(arm), first!).as('j'))
    .selectAll()
    .orderBy('j.id', 'desc')
    .limit(limit);
}

/** The two arms of a read by target, record, event or topic (db/job-state-arms.ts). */
const [SETTLED, IN_FLIGHT] = jobStateArms('delivery_jobs.state');

function filteredJobs(db: Kysely<Tables>, filter: JobFilter, afterId: string | null, limit: number, arm: RawBuilder<boolean> | null) {
  let q = jobsWithTarget(db).orderBy('delivery_jobs.id', 'desc').limit(limit);
  if (arm !== null) q = q.where(arm);
  if (filter.webhookId) q = q.where('delivery_jobs.webhook_id', '=', filter.webhookId);
  if (filter.recordId) q = q.where('delivery_jobs.record_id', '=', filter.recordId);
  if (filter.eventId) q = q.where('delivery_jobs.event_id', '=', filter.eventId);
  if (filter.topics && filter.topics.length === 1) q = q.where('delivery_jobs.topic', '=', filter.topics[0]!);
  else if (filter.topics && filter.topics.length > 0) q = q.where('delivery_jobs.topic', 'in', [...filter.topics]);
  // A literal (one of four validated states): the partial indexes of migration 003 then apply on both databases.
  if (filter.state === 'pending') q = q.where(sql<boolean>`delivery_jobs.state in ('pending', 'held')`);
  else if (filter.state) q = q.where('delivery_jobs.state', '=', sql.lit(filter.state));
  if (filter.since !== undefined) {
    q = q.where('delivery_jobs.id', '>=', idFloorAt('del', filter.since)).where('delivery_jobs.created_at', '>=', filter.since);
  }
  if (filter.until !== undefined) {
    q = q.where('delivery_jobs.id', '<', idFloorAt('del', filter.until + 1 + UNTIL_ID_SLACK_MS)).where('delivery_jobs.created_at', '<=', filter.until);
  }
  if (afterId) q = q.where('delivery_jobs.id', '<', afterId);
  return q;
}

/** Every job of one event, oldest first: one per target at most, plus replays (SPEC §10), so no paging is needed. */
export async function listEventJobs(db: Kysely<Tables>, eventId: string): Promise<ListedJob[]> {
  // Two arms, as listJobsQuery reads them (migration 021).
  const arm = (state: RawBuilder<boolean>) => db.selectFrom(jobsWithTarget(db).where('delivery_jobs.event_id', '=', eventId).where(state).as('a')).selectAll();
  return db.selectFrom(arm(SETTLED).unionAll(arm(IN_FLIGHT)).as('j')).selectAll().orderBy('j.id').execute();
}

/** The exact bytes a job sends: built from the job and its event's payload, as a claim builds them. */
export async function findEnvelope(db: Kysely<Tables>, job: DeliveryJobsTable): Promise<string> {
  const event = await db.selectFrom('events').select('payload').where('id', '=', job.event_id).executeTakeFirst();
  return envelopeOf(job, event?.payload ?? 'null');
}

export async function findJob(db: Kysely<Tables>, id: string): Promise<DeliveryJobsTable | null> {
  return (await db.selectFrom('delivery_jobs').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Each job's state and whether its target is deleted: why a bulk retry left it as it was. Missing ids are absent. */
export async function jobsStanding(db: Kysely<Tables>, ids: readonly string[]): Promise<Array<{ id: string; state: JobState; targetDeleted: boolean }>> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('delivery_jobs as j')
    .innerJoin('webhooks as w', 'w.id', 'j.webhook_id')
    .select(['j.id', 'j.state', 'w.deleted_at'])
    .where('j.id', 'in', [...ids])
    .execute();
  return rows.map((r) => ({ id: r.id, state: r.state, targetDeleted: r.deleted_at !== null }));
}

/** A job as the admin API shows it (with its target's state), or null. */
export async function findListedJob(db: Kysely<Tables>, id: string): Promise<ListedJob | null> {
  return (await jobsWithTarget(db).where('delivery_jobs.id', '=', id).executeTakeFirst()) ?? null;
}

/**
 * Jobs waiting and in flight, and how long the oldest due job has waited: one statement, answered from the partial
 * indexes of unfinished jobs (migration 003), so its cost follows the backlog, never the history of delivered jobs.
 */
export async function queueStats(db: Kysely<Tables>, caps: DialectCapabilities): Promise<{ byState: Record<string, number>; oldestDueAgeMs: number }> {
  const row = await queueStatsStatement(db, caps).executeTakeFirstOrThrow();
  const byState: Record<string, number> = {};
  if (Number(row.pending) > 0) byState.pending = Number(row.pending);
  if (Number(row.delivering) > 0) byState.delivering = Number(row.delivering);
  const due = row.due === null || row.due === undefined ? null : Number(row.due);
  return { byState, oldestDueAgeMs: due === null ? 0 : Math.max(0, Number(row.now) - due) };
}

/** The statement alone, so its query plan can be checked. */
export function queueStatsStatement(db: Kysely<Tables>, caps: DialectCapabilities) {
  // States as literals, so both databases can prove the partial indexes of migration 003 apply.
  return db.selectNoFrom((eb) => [
    eb.selectFrom('delivery_jobs').select(eb.fn.countAll<number>().as('n')).where('state', '=', sql.lit('pending')).as('pending'),
    eb.selectFrom('delivery_jobs').select(eb.fn.countAll<number>().as('n')).where('state', '=', sql.lit('delivering')).as('delivering'),
    eb.selectFrom('delivery_jobs').select((s) => s.fn.min('next_attempt_at').as('due')).where('state', '=', sql.lit('pending')).as('due'),
    caps.nowMs().as('now'),
  ]);
}

/**
 * What prune() would remove now, all batches together (`svc prune --dry-run`). Attempts are counted through the view
 * `delivery_attempts`: rows and the successes delivered jobs hold (migration 020), as prune() counts them.
 */
export async function countPrunable(db: Kysely<Tables>, opts: { state: 'delivered' | 'dead'; before: number }): Promise<{ jobs: number; attempts: number }> {
  const old = db.selectFrom('delivery_jobs').select('id').where('state', '=', sql.lit(opts.state)).where('updated_at', '<', opts.before);
  const jobs = await db.selectFrom(old.as('j')).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const attempts = await db.selectFrom('delivery_attempts').select((eb) => eb.fn.countAll<number>().as('n')).where('job_id', 'in', old).executeTakeFirstOrThrow();
  return { jobs: Number(jobs.n), attempts: Number(attempts.n) };
}

/**
 * The id `scan` dead jobs into a recovery's walk (after `afterId`, or from the window's start `from`; job ids sort by
 * creation time): recoverDead's slice is (start, that id], so no statement of a recovery walks more than `scan`
 * entries of the dead jobs' partial index (migration 003), however many other targets' dead jobs lie in the window.
 * Null when fewer are left.
 */
export async function deadScanEnd(db: Kysely<Tables>, opts: { from: number; afterId: string | null }, scan: number): Promise<string | null> {
  // One lower bound (recover-dead.ts says why).
  const q = db.selectFrom('delivery_jobs').select('id').where('state', '=', sql.lit('dead')).where('id', opts.afterId === null ? '>=' : '>', opts.afterId ?? idFloorAt('del', opts.from));
  const row = await q.orderBy('id').limit(1).offset(scan - 1).executeTakeFirst();
  return row?.id ?? null;
}
