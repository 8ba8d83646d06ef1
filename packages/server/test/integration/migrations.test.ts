import { Migrator, sql, type Migration } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import * as m001 from '../../src/db/migrations/001_initial.js';
import * as m002 from '../../src/db/migrations/002_claim_index.js';
import * as m003 from '../../src/db/migrations/003_lean_jobs.js';
import * as m004 from '../../src/db/migrations/004_job_constraints.js';
import * as m005 from '../../src/db/migrations/005_event_feed.js';
import * as m006 from '../../src/db/migrations/006_subscriptions.js';
import * as m007 from '../../src/db/migrations/007_operations.js';
import * as m008 from '../../src/db/migrations/008_attempt_diagnostics.js';
import * as m009 from '../../src/db/migrations/009_record_queries.js';
import { fieldIndexName } from '../../src/records/query/field-index-store.js';
import { claim } from '../../src/webhooks/queue/claim.js';
import { createEmptyTestDatabase, DIALECTS, type Dialect, type TestDatabase } from '../helpers/db.js';

/** The envelope exactly as svc wrote it into every job row before migration 003. */
const oldEnvelope = (id: string, recordId: string, payload: unknown) =>
  JSON.stringify({ version: '1', id, topic: 'record.updated', collection: 'notes', recordId, payload });

/** Applies exactly these migrations, as an install of that age would have them. */
async function migrateOnly(database: Database, migrations: Record<string, Migration>): Promise<void> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'svc_migrations',
    migrationLockTableName: 'svc_migrations_lock',
    migrationTableSchema: await database.caps.currentSchema(database.db),
  });
  const { error } = await migrator.migrateToLatest();
  expect(error).toBeUndefined();
}

/** A new database per test, migrated by the test itself, closed and dropped after it. */
function freshDatabases(): { open(dialect: Dialect): Promise<Database> } {
  let testDb: TestDatabase | null = null;
  let database: Database | null = null;
  afterEach(async () => {
    await database?.close();
    await testDb?.drop();
    database = null;
    testDb = null;
  });
  return {
    async open(dialect) {
      testDb = await createEmptyTestDatabase(dialect);
      database = await connect(testDb.url, { sqliteSynchronous: 'NORMAL', poolSize: 2 });
      return database;
    },
  };
}

describe.each(DIALECTS)('migration 003: event payloads out of job rows (%s)', (dialect) => {
  const fresh = freshDatabases();

  it('moves each payload to its event byte for byte, so pending jobs send what they would have sent', async () => {
    const database = await fresh.open(dialect);
    const db = database.db;
    const before: Record<string, Migration> = { '001_initial': m001, '002_claim_index': m002 };
    await migrateOnly(database, before);

    // Payloads that would trip a careless cut: the marker inside the data, escapes, non-ASCII, key order.
    const payload = {
      record: { id: 'rec_1', data: { note: 'a ,"payload": inside', quote: 'say "hi"\n', unicode: 'Crème brûlée ✓ 😀', z: 1, a: [1.5, null, true] } },
      previous: { id: 'rec_1', data: {} },
      occurredAt: '2026-11-23T10:00:00.000Z',
    };
    const now = Date.now();
    await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
              values ('wh_a', 'a', 'https://example.com/', '["*"]', 1, 'x', ${now}, ${now})`.execute(db);
    await sql`insert into events (id, topic, collection, record_id, created_at) values ('evt_1', 'record.updated', 'notes', 'rec_1', ${now})`.execute(db);
    await sql`insert into events (id, topic, collection, record_id, created_at) values ('evt_2', 'record.created', 'notes', 'rec_2', ${now})`.execute(db);
    const bodies: Record<string, string> = {};
    for (const [id, state] of [['del_1', 'pending'], ['del_2', 'delivered']] as const) {
      bodies[id] = oldEnvelope(id, 'rec_1', payload);
      await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, body, state, attempt_count, round_start,
                  next_attempt_at, created_at, updated_at)
                values (${id}, 'wh_a', 'evt_1', 'record.updated', 'notes', 'rec_1', ${bodies[id]}, ${state}, 0, 0, ${now - 1000}, ${now}, ${now})`.execute(db);
    }

    expect(await migrateToLatest(database)).toContain('003_lean_jobs');

    const events = await db.selectFrom('events').select(['id', 'payload']).orderBy('id').execute();
    expect(events).toEqual([
      { id: 'evt_1', payload: JSON.stringify(payload) },
      // An event no target subscribed to had no envelope: nothing to keep.
      { id: 'evt_2', payload: null },
    ]);
    const columns = await db.introspection.getTables().then((ts) => ts.find((t) => t.name === 'delivery_jobs')!.columns.map((c) => c.name));
    expect(columns).not.toContain('body');
    const [[claimed]] = await claim(db, database.caps, { now: Date.now(), leaseMs: 60_000, targets: [{ webhookId: 'wh_a', limit: 10 }] });
    expect(claimed!.id).toBe('del_1');
    expect(claimed!.body.toString()).toBe(bodies.del_1);
  });
});

describe.each(DIALECTS)('migration 004: soft-deleted targets, a foreign key and a state check on jobs (%s)', (dialect) => {
  const fresh = freshDatabases();

  it('keeps every job and attempt, gives orphaned jobs a tombstone target, then enforces both constraints', async () => {
    const database = await fresh.open(dialect);
    const db = database.db;
    const before: Record<string, Migration> = { '001_initial': m001, '002_claim_index': m002, '003_lean_jobs': m003 };
    await migrateOnly(database, before);
    const now = Date.now();
    await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
              values ('wh_live', 'live', 'https://example.com/', '["record.created"]', 1, 'sealed', ${now}, ${now})`.execute(db);
    await sql`insert into events (id, topic, collection, record_id, payload, created_at) values ('evt_1', 'record.created', 'notes', 'rec_1', '{}', ${now})`.execute(db);
    // wh_gone was hard-deleted before this migration, as svc did until now: its dead job and attempt stayed.
    for (const [id, target, state] of [['del_1', 'wh_live', 'pending'], ['del_2', 'wh_gone', 'dead']] as const) {
      await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at)
                values (${id}, ${target}, 'evt_1', 'record.created', 'notes', 'rec_1', ${state}, 1, 0, ${now}, ${now - 5000}, ${now - 1000})`.execute(db);
    }
    await sql`insert into delivery_attempts (job_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet)
              values ('del_2', 1, ${now}, 12, 500, 'http_status', 'The receiver answered 500.', 'boom')`.execute(db);

    // Later migrations run too; this test is about 004 (and 006 rebuilding the jobs table again on SQLite).
    expect((await migrateToLatest(database)).slice(0, 2)).toEqual(['004_job_constraints', '005_event_feed']);

    const targets = await db.selectFrom('webhooks').select(['id', 'enabled', 'secret_sealed', 'deleted_at']).orderBy('id').execute();
    expect(targets.map((t) => ({ ...t, deleted_at: t.deleted_at === null ? null : Number(t.deleted_at) }))).toEqual([
      { id: 'wh_gone', enabled: 0, secret_sealed: null, deleted_at: now - 1000 },
      { id: 'wh_live', enabled: 1, secret_sealed: 'sealed', deleted_at: null },
    ]);
    expect(await db.selectFrom('delivery_jobs').select(['id', 'webhook_id', 'state']).orderBy('id').execute()).toEqual([
      { id: 'del_1', webhook_id: 'wh_live', state: 'pending' },
      { id: 'del_2', webhook_id: 'wh_gone', state: 'dead' },
    ]);
    expect(await db.selectFrom('delivery_attempts').select(['job_id', 'response_snippet']).execute()).toEqual([{ job_id: 'del_2', response_snippet: 'boom' }]);
    const insertJob = (id: string, target: string, state: string) =>
      sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at)
          values (${id}, ${target}, 'evt_1', 'record.created', 'notes', 'rec_1', ${state}, 0, 0, ${now}, ${now}, ${now})`.execute(db);
    await expect(insertJob('del_3', 'wh_nobody', 'pending')).rejects.toThrow(/foreign key/i);
    await expect(insertJob('del_4', 'wh_live', 'lost')).rejects.toThrow(/check/i);
    await insertJob('del_5', 'wh_live', 'pending');
    // Migration 006: the fifth state, and existing targets subscribed to everything, unordered.
    await insertJob('del_6', 'wh_live', 'held');
    expect(await db.selectFrom('webhooks').select(['collections', 'filter', 'changed_fields', 'ordering']).where('id', '=', 'wh_live').execute()).toEqual([
      { collections: null, filter: null, changed_fields: null, ordering: 'none' },
    ]);
    // The attempts' cascade still points at the rebuilt jobs table.
    await sql`delete from delivery_jobs where id = 'del_2'`.execute(db);
    expect(await db.selectFrom('delivery_attempts').selectAll().execute()).toEqual([]);
  });
});

describe.each(DIALECTS)('migration 008: attempts name their target and keep diagnostics (%s)', (dialect) => {
  const fresh = freshDatabases();

  it('fills webhook_id of existing attempts from their jobs; their diagnostics stay null', async () => {
    const database = await fresh.open(dialect);
    const db = database.db;
    await migrateOnly(database, { '001_initial': m001, '002_claim_index': m002, '003_lean_jobs': m003, '004_job_constraints': m004, '005_event_feed': m005 });
    const now = Date.now();
    await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
              values ('wh_a', 'a', 'https://example.com/', '["record.created"]', 1, 'sealed', ${now}, ${now})`.execute(db);
    await sql`insert into events (id, topic, collection, record_id, payload, created_at) values ('evt_1', 'record.created', 'notes', 'rec_1', '{}', ${now})`.execute(db);
    await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at)
              values ('del_1', 'wh_a', 'evt_1', 'record.created', 'notes', 'rec_1', 'delivered', 1, 0, ${now}, ${now}, ${now})`.execute(db);
    await sql`insert into delivery_attempts (job_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet)
              values ('del_1', 1, ${now}, 12, 200, null, null, 'ok')`.execute(db);

    expect(await migrateToLatest(database)).toContain('008_attempt_diagnostics');

    expect(await db.selectFrom('delivery_attempts').select(['job_id', 'webhook_id', 'remote_address', 'dns_ms', 'connect_ms', 'tls_ms', 'first_byte_ms']).execute()).toEqual([
      { job_id: 'del_1', webhook_id: 'wh_a', remote_address: null, dns_ms: null, connect_ms: null, tls_ms: null, first_byte_ms: null },
    ]);
  });
});

describe('migration 010: statistics for the text fields indexed before it (postgres)', () => {
  const fresh = freshDatabases();

  it.runIf(DIALECTS.includes('postgres'))('gives each text field index its statistics object, and none to a numeric one', async () => {
    const database = await fresh.open('postgres');
    const db = database.db;
    const q = database.caps.query;
    await migrateOnly(database, {
      '001_initial': m001, '002_claim_index': m002, '003_lean_jobs': m003, '004_job_constraints': m004, '005_event_feed': m005,
      '006_subscriptions': m006, '007_operations': m007, '008_attempt_diagnostics': m008, '009_record_queries': m009,
    });
    const now = Date.now();
    await sql`insert into collections (name, fields, created_at, updated_at) values ('issues', '[]', ${now}, ${now})`.execute(db);
    // The indexes as svc built them before 010: index only.
    await sql.raw(q.createIndex(fieldIndexName('issues', 'status'), 'issues', q.field('status', 'text'))).execute(db);
    await sql.raw(q.createIndex(fieldIndexName('issues', 'priority'), 'issues', q.field('priority', 'integer'))).execute(db);

    expect(await migrateToLatest(database)).toContain('010_field_statistics');

    const stats = await sql<{ name: string; definition: string }>`select stxname as name, pg_get_statisticsobjdef(oid) as definition from pg_statistic_ext`.execute(db);
    expect(stats.rows.map((r) => r.name)).toEqual([`${fieldIndexName('issues', 'status')}_stats`]);
    expect(stats.rows[0]!.definition).toContain(`(data::jsonb ->> 'status'::text) COLLATE "C"`);
  });
});
