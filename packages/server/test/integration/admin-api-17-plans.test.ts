import { CompiledQuery, sql, type Compilable, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import { idFloorAt } from '../../src/lib/ids.js';
import { listJobs, listJobsQuery, type JobFilter } from '../../src/webhooks/queue/jobs-store.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { statementWork } from '../helpers/plan-work.js';

const T0 = Date.UTC(2026, 10, 1);
const JOBS = 200_000;
const RECORDS = 50_000;
/** Job i's topic: one in 1,000 a test, one in 5,000 (40 in all) a deletion, a third updates, the rest creations. */
const topicOf = (i: number) => (i % 1000 === 0 ? 'webhook.test' : i % 5000 === 7 ? 'record.deleted' : i % 3 === 0 ? 'record.updated' : 'record.created');

async function planOf(db: Kysely<Tables>, dialect: string, query: Compilable): Promise<string> {
  const compiled = query.compile();
  const explain = dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
  const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]));
  return rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n');
}

/** A walk of every job, in either database's words (the primary key in id order is one too; a partial index holds only its own). */
const FULL_SCAN = /Seq Scan on delivery_jobs|SCAN delivery_jobs(?! USING INDEX delivery_jobs_(record|event_target|webhook|other_topics|topic))|Index Scan Backward using delivery_jobs_pkey on delivery_jobs(?![\s\S]*Index Cond)/;

/**
 * The deliveries list's filters (SPEC §17) on 200,000 jobs: a record's, an event's and a time window's jobs are read
 * from an index range, never by walking the whole table (migration 016 adds the record index). Job `i` belongs to
 * record `i % 50,000` (four jobs each) and to event `i`, and was created at T0 + i seconds, its id made then.
 */
describe.each(DIALECTS)('the deliveries list reads an index range for each filter (%s)', (dialect) => {
  let t: TestContext;
  let db: Kysely<Tables>;
  const idAt = (i: number) => `${idFloorAt('del', T0 + i * 1000).slice(0, 14)}${String(i).padStart(16, '0')}`;

  beforeAll(async () => {
    t = await createTestContext(dialect);
    db = t.ctx.database.db;
    for (const id of ['wh_a', 'wh_b']) {
      await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
                values (${id}, ${id}, 'https://example.com/', '["record.created"]', 1, 'x', ${T0}, ${T0})`.execute(db);
    }
    await sql`insert into events (id, topic, collection, record_id, payload, created_at) values ('evt_x', 'record.created', 'c', 'rec_x', '{}', ${T0})`.execute(db);
    // Ids as newId would make them at each job's creation time: the time part, then digits (a valid Crockford text).
    // 1,500 rows a statement: 17 parameters each stay under both databases' limits on parameters.
    const ids = Array.from({ length: JOBS }, (_, i) => idAt(i));
    for (let from = 0; from < JOBS; from += 1_500) {
      const slice = ids.slice(from, from + 1_500);
      await db
        .insertInto('delivery_jobs')
        .values(
          slice.map((id, k) => {
            const i = from + k;
            return {
              id,
              webhook_id: i % 2 === 0 ? 'wh_a' : 'wh_b',
              event_id: `evt_${String(i).padStart(26, '0')}`,
              topic: topicOf(i),
              collection: 'c',
              record_id: `rec_${String(i % RECORDS).padStart(26, '0')}`,
              state: i % 10 === 0 ? 'dead' : 'delivered',
              attempt_count: 1,
              round_start: 0,
              next_attempt_at: T0 + i * 1000,
              lease_id: null,
              lease_expires_at: null,
              last_error_code: null,
              last_error_message: null,
              created_at: T0 + i * 1000,
              updated_at: T0 + i * 1000,
              ordered: 0,
            };
          }),
        )
        .execute();
    }
    if (dialect === 'postgres') await sql`analyze delivery_jobs`.execute(db);
  }, 120_000);
  afterAll(async () => t?.close());

  const rec = (n: number) => `rec_${String(n).padStart(26, '0')}`;
  const cases: Array<[string, JobFilter, RegExp, number]> = [
    // name, filter, the index its plan must name, jobs it finds (at most a page of 51)
    ['recordId', { recordId: rec(123) }, /delivery_jobs_record/, 4],
    ['recordId and topics', { recordId: rec(123), topics: ['record.created', 'record.updated'] }, /delivery_jobs_record/, 4],
    ['eventId', { eventId: `evt_${String(4242).padStart(26, '0')}` }, /delivery_jobs_event_target/, 1],
    // A state beside them: on PostgreSQL those indexes hold every state but `delivering` (migration 021), and each
    // state named here proves that, so the same index serves.
    ['recordId and a state', { recordId: rec(123), state: 'delivered' }, /delivery_jobs_record/, 4],
    ['eventId and a state', { eventId: `evt_${String(4240).padStart(26, '0')}`, state: 'dead' }, /delivery_jobs_event_target/, 1],
    // webhook.test: one job in 1,000; collection.deleted: none at all, which once meant walking every job.
    ['a topic other than record.*', { topics: ['webhook.test'] }, /delivery_jobs_topic/, 51],
    ['topics none of which has a job', { topics: ['collection.deleted', 'delivery.dead'] }, /delivery_jobs_topic/, 0],
    // record.deleted: 40 jobs, so a page of 51 once walked every job (migration 025 adds the topic index).
    ['a record topic of one job in 5,000', { topics: ['record.deleted'] }, /delivery_jobs_topic/, 40],
    ['a common record topic', { topics: ['record.updated'] }, /delivery_jobs_topic|sqlite_autoindex_delivery_jobs_1|delivery_jobs_pkey/, 51],
    ['a rare and a common topic', { topics: ['record.deleted', 'record.updated'] }, /delivery_jobs_topic/, 51],
    ['a rare topic and a state', { topics: ['record.deleted'], state: 'delivered' }, /delivery_jobs_topic/, 40],
    ['a rare topic and a target', { topics: ['record.deleted'], webhookId: 'wh_b' }, /delivery_jobs_topic/, 40],
  ];

  it.each(cases)('%s: one range of its index', async (_name, filter, index, found) => {
    const plan = await planOf(db, dialect, listJobsQuery(db, filter, null, 51));
    expect(plan).toMatch(index);
    expect(plan).not.toMatch(FULL_SCAN);
    expect(await listJobs(db, filter, null, 51)).toHaveLength(found);
  });

  it('a topic paged a few jobs at a time: every job of it once, newest first, each page a range of the topic index or a few rows', async () => {
    const deleted = Array.from({ length: JOBS }, (_, i) => i).filter((i) => topicOf(i) === 'record.deleted').reverse().map(idAt);
    const tests = Array.from({ length: JOBS }, (_, i) => i).filter((i) => topicOf(i) === 'webhook.test' || topicOf(i) === 'record.deleted').reverse().map(idAt);
    for (const [filter, want] of [[{ topics: ['record.deleted'] }, deleted], [{ topics: ['webhook.test', 'record.deleted', 'webhook.test'] }, tests]] as const) {
      const seen: string[] = [];
      for (let after: string | null = null; ; ) {
        const plan = await planOf(db, dialect, listJobsQuery(db, filter, after, 8));
        expect(plan).not.toMatch(FULL_SCAN);
        // PostgreSQL walks the ids below a cursor when it expects few there (the last pages): counted, not named.
        if (dialect === 'sqlite') expect(plan).toMatch(/delivery_jobs_topic/);
        else expect(await statementWork(db, listJobsQuery(db, filter, after, 8).compile())).toBeLessThan(400);
        const page = await listJobs(db, filter, after, 8);
        seen.push(...page.map((j) => j.id));
        if (page.length < 8) break;
        after = page.at(-1)!.id;
      }
      expect(seen).toEqual(want);
    }
  });

  it.runIf(dialect === 'postgres')('a rare topic touches the rows it returns, not the table (EXPLAIN ANALYZE)', async () => {
    for (const filter of [{ topics: ['record.deleted'] }, { topics: ['record.deleted', 'delivery.dead'] }, { topics: ['record.deleted'], since: T0 }] satisfies JobFilter[]) {
      // 40 jobs, each read once from the topic index and once as a row, plus the target's `enabled` per row: before
      // 025, 200,000 jobs walked.
      expect(await statementWork(db, listJobsQuery(db, filter, null, 51).compile())).toBeLessThan(400);
    }
  });

  it('since and until: a range of the primary key between the window\'s ends, whatever else is asked', async () => {
    const since = T0 + (JOBS - 100) * 1000;
    const until = T0 + 1000 * 1000;
    // With a topic, a range of the topic index's ids (topic=? AND id…) serves as well.
    const range = dialect === 'sqlite' ? /SEARCH delivery_jobs USING INDEX (sqlite_autoindex_delivery_jobs_1 \(|delivery_jobs_topic \(topic=\? AND )id[<>]\?/ : /Index Cond: \(\(?(topic = '[a-z.]+'::text\) AND \()?id [<>]=? /;
    for (const filter of [{ since }, { since, topics: ['record.updated'] }, { until }, { until, topics: ['record.updated'] }, { since: until - 500_000, until }] satisfies JobFilter[]) {
      const plan = await planOf(db, dialect, listJobsQuery(db, filter, null, 51));
      expect(plan).toMatch(range);
      expect(plan).not.toMatch(FULL_SCAN);
    }
    expect((await listJobs(db, { since }, null, 500)).map((j) => j.id)).toEqual(Array.from({ length: 100 }, (_, k) => idAt(JOBS - 1 - k)));
    expect((await listJobs(db, { since, until: since + 9_000 }, null, 500)).map((j) => j.id)).toEqual(Array.from({ length: 10 }, (_, k) => idAt(JOBS - 91 - k)));
    expect((await listJobs(db, { until }, null, 3)).map((j) => j.id)).toEqual([idAt(1000), idAt(999), idAt(998)]);
  });
});
