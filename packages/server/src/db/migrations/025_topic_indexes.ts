import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * Reads filtered by topic alone cost what they return, not the table: each topic's events in the feed and each
 * topic's delivery jobs have an index of their own.
 *
 * 1. `events_topic_feed (topic, tx, position) where position is not null`: the feed of a few topics, as
 *    `events_collection_feed` (024) is of a few collections; a read filtered by topic and no collection seeks each
 *    topic's events after its cursor (feed-store.ts scanBound). Before, `topic=delivery.dead` beside 200,000 events
 *    walked all of them to find none: 300–380 ms a read on SQLite (200 slices), 270–340 ms on PostgreSQL, ten at once
 *    1.8–2.3 s; a topic of one event in 1,000 answered one event a page on SQLite (a slice of 1,024 positions each).
 * 2. `delivery_jobs_topic (topic, id)`: a topic's jobs, newest first (webhooks/queue/jobs-store.ts). A record topic
 *    with no job walked every job (`delivery_jobs_other_topics`, 016, holds only the others): 60–100 ms on SQLite and
 *    60–210 ms on PostgreSQL over 200,000 jobs, ten at once 0.7–0.9 s. On PostgreSQL it holds no job being delivered,
 *    as the target's, record's and event's indexes do (021), so a claim writes no entry into it; on SQLite it is whole
 *    (an update there rewrites an index only when one of its columns changes, so a claim costs it nothing).
 *
 * What each write pays: one more index entry per event and per job. SQLite, callgrind, single-row inserts 100 a
 * transaction into tables of 100,000 rows (the difference of 2,000 and 12,000 inserts): an event 43,700 → 49,400
 * instructions, a job 77,200 → 85,300. PostgreSQL, 20,000 single-row inserts in a function beside 200,000 rows: an
 * event 526 → 620 bytes of WAL, a job 750–810 → 910–940 (the times per insert move less than this machine's noise:
 * events 19–25 → 30–39 µs, jobs 54–90 → 73–97 µs). Built over 200,000 rows in 0.4–0.5 s (events) and 0.2–0.3 s (jobs)
 * on SQLite, 0.7–0.8 s each on PostgreSQL, inside the migration's transaction: writes wait meanwhile.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index events_topic_feed on events (topic, tx, position) where position is not null`.execute(db);
  const settled = db.getExecutor().adapter instanceof SqliteAdapter ? sql`` : sql`where state <> 'delivering'`;
  await sql`create index delivery_jobs_topic on delivery_jobs (topic, id) ${settled}`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
