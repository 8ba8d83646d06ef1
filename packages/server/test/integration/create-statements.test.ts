import pg from 'pg';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertTogether, type InsertPart } from '../../src/db/compiled.js';
import { createManyInTransaction } from '../../src/records/changes.js';
import { findCollection } from '../../src/records/collections-store.js';
import { createOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { listenTo, type Listener } from '../helpers/notifications.js';
import { NOW, T0, seedTarget } from '../helpers/queue-fixtures.js';

/**
 * On PostgreSQL a create's record, event and jobs are one statement (a data-modifying WITH, db/compiled.ts
 * insertTogether): its transaction is the targets' read, that statement and the commit, where the three inserts were a
 * round trip each. Every statement the pg client sends is recorded, as sent. No statement of the write notifies:
 * PostgreSQL serializes the commits of notifying transactions (postgres-listen.ts coalescedNotices); the workers' and
 * the feed readers' wake-ups are sent after the commit (outbox.committed), and heard only then. A batch larger than one
 * statement takes falls back to inserts apart, and writes everything all the same.
 */
describe.runIf(POSTGRES_URL)('a create\'s statements (postgres)', () => {
  let t: TestContext;
  let listener: Listener;
  /** The channels heard so far, each notification once. */
  const heardSoFar = async () => (await listener.heardSoFar()).map((n) => n.channel).sort();

  beforeEach(async () => {
    t = await createTestContext('postgres');
    await sql`insert into collections (name, fields, created_at, updated_at) values ('docs', '[]', ${T0}, ${T0})`.execute(t.ctx.database.db);
    listener = await listenTo(t.database.url, ['svc_events', 'svc_jobs']);
  });
  afterEach(async () => {
    await listener.close();
    await t.close();
  });

  /**
   * Creates `n` records in one transaction, recording the text of every statement the pg client sends meanwhile, and
   * checks that nothing was heard from it before its after-commit step (outbox.committed) ran; then runs that step.
   */
  async function create(n: number): Promise<string[]> {
    const { database, logger } = t.ctx;
    const collection = (await findCollection(database.db, 'docs'))!;
    const outbox = createOutbox(database, logger, null);
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as string | { text?: string };
      sent.push(typeof q === 'string' ? q : (q.text ?? ''));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    let written: Awaited<ReturnType<typeof createManyInTransaction>>;
    try {
      const creates = Array.from({ length: n }, (_, i) => ({ collection, data: { title: `record ${i}` } }));
      written = await database.write((trx) => createManyInTransaction(trx, outbox, creates, NOW));
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(await heardSoFar()).toEqual([]);
    await outbox.committed(written.map((w) => w.jobs));
    return sent;
  }

  const kind = (text: string): string => {
    const s = text.trim().toLowerCase();
    if (s === 'begin' || s === 'commit') return s;
    // The targets with their version (the outbox keeps them for its next writes: targets-kept.test.ts).
    if (s.startsWith('select v.targets_version')) return 'targets';
    if (s.startsWith('select svc_targets_at(')) return 'targets check';
    const tables = ['records', 'events', 'delivery_jobs'].filter((table) => s.includes(`insert into "${table}"`));
    return `insert ${tables.join('+')}${s.includes('notify') ? ' (notify)' : ''}`;
  };

  const counts = async () => {
    const db = t.ctx.database.db;
    const n = async (table: string, where = sql`true`) => Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(db)).rows[0]!.n);
    return { records: await n('records'), feedEvents: await n('events', sql`position is not null`), pendingJobs: await n('delivery_jobs', sql`state = 'pending'`) };
  };

  it('one record with a subscribed target: the targets\' read, one insert of record, event and job, the commit; both wake-ups after it', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    const sent = await create(1);
    expect(sent.map(kind)).toEqual(['begin', 'targets', 'insert records+events+delivery_jobs', 'commit']);
    expect(await counts()).toEqual({ records: 1, feedEvents: 1, pendingJobs: 1 });
    expect(await heardSoFar()).toEqual(['svc_events', 'svc_jobs']);
  });

  it('no subscribed target: the record and its event in one insert, the feed\'s wake-up only', async () => {
    const sent = await create(1);
    expect(sent.map(kind)).toEqual(['begin', 'targets', 'insert records+events', 'commit']);
    expect(await counts()).toEqual({ records: 1, feedEvents: 1, pendingJobs: 0 });
    expect(await heardSoFar()).toEqual(['svc_events']);
  });

  it('a batch of 150 (more rows than one insert takes): inserts apart, every record, event and job written, woken once each', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    const sent = await create(150);
    expect(sent.map(kind)).toEqual([
      'begin',
      'targets',
      'insert records',
      'insert records',
      'insert events',
      'insert events',
      'insert delivery_jobs',
      'insert delivery_jobs',
      // Inserts apart check the targets' version after them, where one statement checks it with its inserts.
      'targets check',
      'commit',
    ]);
    expect(await counts()).toEqual({ records: 150, feedEvents: 150, pendingJobs: 150 });
    // One notification per channel for the whole transaction.
    expect(await heardSoFar()).toEqual(['svc_events', 'svc_jobs']);
  });

  it('three records, two targets: one insert, each job of its own record\'s event, the events in the records\' order', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    await seedTarget(t.ctx.database.db, 'wh_b');
    const sent = await create(3);
    expect(sent.map(kind)).toEqual(['begin', 'targets', 'insert records+events+delivery_jobs', 'commit']);
    const db = t.ctx.database.db;
    const rows = (
      await sql<{ title: string; record_id: string; event_id: string; webhook_id: string; position: string }>`
        select r.data::json->>'title' as title, j.record_id, j.event_id, j.webhook_id, e.position
          from delivery_jobs j join events e on e.id = j.event_id and e.record_id = j.record_id join records r on r.id = j.record_id
         order by e.position, j.webhook_id`.execute(db)
    ).rows;
    expect(rows.map((r) => [r.title, r.webhook_id])).toEqual([
      ['record 0', 'wh_a'], ['record 0', 'wh_b'], ['record 1', 'wh_a'], ['record 1', 'wh_b'], ['record 2', 'wh_a'], ['record 2', 'wh_b'],
    ]);
    expect(await heardSoFar()).toEqual(['svc_events', 'svc_jobs']);
  });

  it('a create rolled back after its one statement: nothing written, nobody woken', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    const { database, logger } = t.ctx;
    const collection = (await findCollection(database.db, 'docs'))!;
    const outbox = createOutbox(database, logger, null);
    await expect(
      database.write(async (trx) => {
        await createManyInTransaction(trx, outbox, [{ collection, data: { title: 'gone' } }], NOW);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await counts()).toEqual({ records: 0, feedEvents: 0, pendingJobs: 0 });
    expect(await heardSoFar()).toEqual([]);
  });

  it('at most 256 shapes of inserts run together are kept: a new shape past them runs its inserts apart, and writes all the same', async () => {
    const { database } = t.ctx;
    // Two parts of small rows (svc_meta keys, records of the collection) in every mix of row counts up to 17 × 16.
    const part = (table: 'svc_meta' | 'records', n: number, tag: string): InsertPart =>
      table === 'svc_meta'
        ? { spec: { name: 'shape-meta', table: 'svc_meta', columns: ['key', 'value'] }, rows: Array.from({ length: n }, (_, i) => [`${tag}-${i}`, 'v']) }
        : { spec: { name: 'shape-records', table: 'records', columns: ['id', 'collection', 'version', 'data', 'created_at', 'updated_at'] }, rows: Array.from({ length: n }, (_, i) => [`rec_${tag}_${i}`, 'docs', 1, '{}', T0, T0]) };
    const statements = async (a: number, b: number, tag: string): Promise<number> => {
      let n = 0;
      const query = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        n++;
        return (query as (...x: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      try {
        await database.db.connection().execute((c) => insertTogether(c, database.caps, [part('svc_meta', a, tag), part('records', b, tag)]));
      } finally {
        pg.Client.prototype.query = query;
      }
      return n;
    };
    let shapes = 0;
    for (let a = 1; a <= 17 && shapes < 256; a++) for (let b = 1; b <= 16 && shapes < 256; b++, shapes++) expect(await statements(a, b, `s${a}x${b}`)).toBe(1);
    // A new shape: apart (two statements); one already kept: still together.
    expect(await statements(17, 15, 'new')).toBe(2);
    expect(await statements(1, 1, 'again')).toBe(1);
    const written = await sql<{ n: string }>`select count(*) as n from records where id like 'rec_new_%'`.execute(database.db);
    expect(Number(written.rows[0]!.n)).toBe(15);
  });
});
