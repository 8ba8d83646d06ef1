import { Migrator, sql, type Migration } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import * as m001 from '../../src/db/migrations/001_initial.js';
import * as m002 from '../../src/db/migrations/002_claim_index.js';
import { claimJobs } from '../../src/webhooks/queue/claim-jobs.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/db.js';

/** The envelope exactly as svc wrote it into every job row before migration 003. */
const oldEnvelope = (id: string, recordId: string, payload: unknown) =>
  JSON.stringify({ version: '1', id, topic: 'record.updated', collection: 'notes', recordId, payload });

describe.each(DIALECTS)('migration 003: event payloads out of job rows (%s)', (dialect) => {
  let testDb: TestDatabase | null = null;
  let database: Database | null = null;
  afterEach(async () => {
    await database?.close();
    await testDb?.drop();
    database = null;
    testDb = null;
  });

  it('moves each payload to its event byte for byte, so pending jobs send what they would have sent', async () => {
    testDb = await createTestDatabase(dialect);
    database = connect(testDb.url, { sqliteSynchronous: 'NORMAL', poolSize: 2 });
    const db = database.db;
    const before: Record<string, Migration> = { '001_initial': m001, '002_claim_index': m002 };
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => before },
      migrationTableName: 'svc_migrations',
      migrationLockTableName: 'svc_migrations_lock',
      migrationTableSchema: await database.caps.currentSchema(db),
    });
    const { error } = await migrator.migrateToLatest();
    expect(error).toBeUndefined();

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
    const [claimed] = await claimJobs(db, database.caps, { leaseId: 'lease_x', leaseMs: 60_000, limit: 10, webhookId: 'wh_a' });
    expect(claimed!.id).toBe('del_1');
    expect(claimed!.body).toBe(bodies.del_1);
  });
});
