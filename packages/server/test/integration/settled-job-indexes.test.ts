import { CompiledQuery, sql, type Kysely, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import { pruneEvents } from '../../src/events/retention-store.js';
import type { EventId, WebhookId } from '../../src/lib/ids.js';
import { listEventJobs, listJobs } from '../../src/webhooks/queue/jobs-store.js';
import { killTargetJobs } from '../../src/webhooks/queue/kill-target-jobs.js';
import { replayEvents } from '../../src/webhooks/queue/replay-events.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS, POSTGRES_URL } from '../helpers/db.js';

const T0 = Date.UTC(2026, 0, 1);
const A = 'wh_a' as WebhookId;
const B = 'wh_b' as WebhookId;

/**
 * Migration 021: on PostgreSQL the indexes of a target's, a record's and an event's jobs hold no job being delivered,
 * so a claim writes none of their entries. Every reader by target, record or event still finds a job in flight:
 * the deliveries list and an event's jobs show it, replay does not give its event a second job, retention keeps its
 * event, and deleting its target kills it.
 */
describe.each(DIALECTS)('jobs in flight, outside the settled jobs\' indexes (%s)', (dialect) => {
  let t: TestContext;
  let db: Kysely<Tables>;
  const ids = (jobs: Array<{ id: string }>) => jobs.map((j) => j.id);

  beforeAll(async () => {
    t = await createTestContext(dialect);
    db = t.ctx.database.db;
    for (const id of [A, B]) {
      await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
                values (${id}, ${id}, 'https://example.com/', '["record.created"]', 1, 'x', ${T0}, ${T0})`.execute(db);
    }
    for (const n of [1, 2, 3, 4]) {
      await sql`insert into events (id, topic, collection, record_id, payload, created_at)
                values (${`evt_${n}`}, 'record.created', 'c', 'rec_1', '{}', ${T0 + n})`.execute(db);
    }
    const job = (id: string, webhook: string, event: string, state: string) => ({
      id,
      webhook_id: webhook,
      event_id: event,
      topic: 'record.created',
      collection: 'c',
      record_id: 'rec_1',
      state,
      attempt_count: state === 'delivering' ? 0 : 1,
      round_start: 0,
      next_attempt_at: T0,
      lease_id: state === 'delivering' ? 'lease_x' : null,
      lease_expires_at: state === 'delivering' ? T0 + 3_600_000_000 : null,
      last_error_code: null,
      last_error_message: null,
      created_at: T0,
      updated_at: T0,
      ordered: 0,
    });
    await db
      .insertInto('delivery_jobs')
      .values([job('del_1', A, 'evt_1', 'delivered'), job('del_2', A, 'evt_2', 'delivering'), job('del_3', B, 'evt_2', 'delivered'), job('del_4', A, 'evt_3', 'delivered')] as never)
      .execute();
  });
  afterAll(async () => t?.close());

  it('on PostgreSQL the three indexes leave jobs in flight out; SQLite keeps them whole (it rewrites them on no claim)', async () => {
    const names = ['delivery_jobs_webhook', 'delivery_jobs_record', 'delivery_jobs_event_target'];
    const { rows } =
      dialect === 'postgres'
        ? await sql<{ name: string; definition: string }>`select indexname as name, indexdef as definition from pg_indexes where indexname in (${sql.join(names)})`.execute(db)
        : await sql<{ name: string; definition: string }>`select name, sql as definition from sqlite_master where type = 'index' and name in (${sql.join(names)})`.execute(db);
    expect(rows.map((r) => r.name).sort()).toEqual([...names].sort());
    for (const r of rows) {
      if (dialect === 'postgres') expect(r.definition).toMatch(/WHERE \(state <> 'delivering'::text\)$/);
      else expect(r.definition).not.toMatch(/where/i);
    }
  });

  it('the deliveries list by target, record and event shows the job in flight in its place, page by page', async () => {
    expect(ids(await listJobs(db, { webhookId: A }, null, 50))).toEqual(['del_4', 'del_2', 'del_1']);
    expect(ids(await listJobs(db, { webhookId: A }, null, 2))).toEqual(['del_4', 'del_2']);
    expect(ids(await listJobs(db, { webhookId: A }, 'del_2', 2))).toEqual(['del_1']);
    expect(ids(await listJobs(db, { recordId: 'rec_1' }, null, 50))).toEqual(['del_4', 'del_3', 'del_2', 'del_1']);
    expect(ids(await listJobs(db, { eventId: 'evt_2' }, null, 50))).toEqual(['del_3', 'del_2']);
    expect(ids(await listJobs(db, { webhookId: A, recordId: 'rec_1', eventId: 'evt_2' }, null, 50))).toEqual(['del_2']);
    expect(ids(await listJobs(db, { webhookId: A, state: 'delivering' }, null, 50))).toEqual(['del_2']);
    expect(ids(await listJobs(db, { webhookId: A, state: 'delivered' }, null, 50))).toEqual(['del_4', 'del_1']);
    const listed = await listEventJobs(db, 'evt_2');
    expect(ids(listed)).toEqual(['del_2', 'del_3']);
    expect(listed.map((j) => [j.state, Number(j.target_enabled)])).toEqual([['delivering', 1], ['delivered', 1]]);
  });

  it('replay gives no second job to an event whose job is in flight, nor to one delivered', async () => {
    const made = await db.transaction().execute((trx) =>
      replayEvents(trx, t.ctx.database.caps, { now: T0 + 10, webhookId: A, ordered: false, eventIds: ['evt_1', 'evt_2', 'evt_3', 'evt_4'] as EventId[] }),
    );
    expect(made).toHaveLength(1);
    const evt4 = await listEventJobs(db, 'evt_4');
    expect(evt4.map((j) => [j.id, j.webhook_id, j.state])).toEqual([[made[0], A, 'pending']]);
  });

  it('retention keeps the event of a job in flight (and of a pending one), and removes those only delivered jobs need', async () => {
    const res = await pruneEvents(db, t.ctx.database.caps, { before: T0 + 1_000, idBelow: 'evt_9', limit: 100 });
    expect(res.events).toBe(2);
    const left = await db.selectFrom('events').select('id').orderBy('id').execute();
    expect(left.map((e) => e.id)).toEqual(['evt_2', 'evt_4']);
  });

  it("deleting a target kills its job in flight with its pending one, and leaves its delivered jobs and others' alone", async () => {
    const killed = await db.transaction().execute((trx) => killTargetJobs(trx, { now: T0 + 20, webhookId: A }));
    expect(killed).toBe(2);
    const states = await db.selectFrom('delivery_jobs').select(['id', 'state']).where('id', 'in', ['del_1', 'del_2', 'del_3', 'del_4']).orderBy('id').execute();
    expect(states.map((s) => s.state)).toEqual(['delivered', 'dead', 'delivered', 'delivered']);
    expect((await listEventJobs(db, 'evt_4')).map((j) => j.state)).toEqual(['dead']);
  });
});

/**
 * On PostgreSQL every statement those readers run has an index path to the jobs it asks for: with sequential scans
 * priced out (`enable_seqscan = off`), none of their plans scans delivery_jobs whole. A reader that asked for a
 * target's, record's or event's jobs without naming the state could not use the partial indexes of migration 021 at
 * all, and this is what it would show.
 */
describe.runIf(POSTGRES_URL)('the readers of jobs in flight keep an index path (postgres)', () => {
  let t: TestContext;
  let db: Kysely<Tables>;
  const seen: RootOperationNode[] = [];
  // Every statement the readers run, transactions included (a plugin goes with the Kysely into its transactions).
  const capture: KyselyPlugin = {
    transformQuery: (args) => {
      seen.push(args.node);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };

  beforeAll(async () => {
    t = await createTestContext('postgres');
    db = t.ctx.database.db;
    await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
              values (${A}, 'a', 'https://example.com/', '["record.created"]', 1, 'x', ${T0}, ${T0})`.execute(db);
    await sql`insert into events (id, topic, collection, record_id, payload, created_at) values ('evt_1', 'record.created', 'c', 'rec_1', '{}', ${T0})`.execute(db);
  });
  afterAll(async () => t?.close());

  it('lists, an event\'s jobs, replay, retention and a target\'s deletion', async () => {
    const traced = db.withPlugin(capture);
    const caps = t.ctx.database.caps;
    await listJobs(traced, { webhookId: A }, null, 50);
    await listJobs(traced, { recordId: 'rec_1' }, 'del_9', 50);
    await listJobs(traced, { eventId: 'evt_1' }, null, 50);
    await listEventJobs(traced, 'evt_1');
    await traced.transaction().execute((trx) => replayEvents(trx, caps, { now: T0, webhookId: A, ordered: false, eventIds: ['evt_1'] as EventId[] }));
    await pruneEvents(traced, caps, { before: T0 - 1, idBelow: 'evt_9', limit: 10 });
    await traced.transaction().execute((trx) => killTargetJobs(trx, { now: T0, webhookId: A }));
    const statements = seen.map((node) => db.getExecutor().compileQuery(node, { queryId: 'plan' } as never)).filter((q) => /delivery_jobs/.test(q.sql));
    expect(statements.length).toBeGreaterThanOrEqual(8);
    await db.connection().execute(async (c) => {
      await sql`set enable_seqscan = off`.execute(c);
      try {
        for (const q of statements) {
          const { rows } = await c.executeQuery(CompiledQuery.raw<Record<string, string>>(`explain ${q.sql}`, [...q.parameters]));
          const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
          expect(plan, q.sql).not.toMatch(/Seq Scan on delivery_jobs/);
        }
      } finally {
        await sql`reset enable_seqscan`.execute(c);
      }
    });
  });
});
