import pg from 'pg';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
 * round trip each. Every statement the pg client sends is recorded, as sent. The workers' and the feed readers'
 * wake-ups still travel with the write, heard at its commit; a batch larger than one statement takes falls back to
 * inserts apart, and writes everything all the same.
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

  /** Creates `n` records in one transaction, recording the text of every statement the pg client sends meanwhile. */
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
    try {
      const creates = Array.from({ length: n }, (_, i) => ({ collection, data: { title: `record ${i}` } }));
      await database.write((trx) => createManyInTransaction(trx, outbox, creates, NOW));
    } finally {
      pg.Client.prototype.query = query;
    }
    return sent;
  }

  const kind = (text: string): string => {
    const s = text.trim().toLowerCase();
    if (s === 'begin' || s === 'commit') return s;
    if (/^select \* from "webhooks"/.test(s)) return 'targets';
    const tables = ['records', 'events', 'delivery_jobs'].filter((table) => s.includes(`insert into "${table}"`));
    return `insert ${tables.join('+')}${s.includes('pg_notify') ? ' (notify)' : ''}`;
  };

  const counts = async () => {
    const db = t.ctx.database.db;
    const n = async (table: string, where = sql`true`) => Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(db)).rows[0]!.n);
    return { records: await n('records'), feedEvents: await n('events', sql`position is not null`), pendingJobs: await n('delivery_jobs', sql`state = 'pending'`) };
  };

  it('one record with a subscribed target: the targets\' read, one insert of record, event and job, the commit; both wake-ups at the commit', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    const sent = await create(1);
    expect(sent.map(kind)).toEqual(['begin', 'targets', 'insert records+events+delivery_jobs (notify)', 'commit']);
    expect(await counts()).toEqual({ records: 1, feedEvents: 1, pendingJobs: 1 });
    expect(await heardSoFar()).toEqual(['svc_events', 'svc_jobs']);
  });

  it('no subscribed target: the record and its event in one insert, the feed\'s wake-up only', async () => {
    const sent = await create(1);
    expect(sent.map(kind)).toEqual(['begin', 'targets', 'insert records+events (notify)', 'commit']);
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
      'insert events (notify)',
      'insert events (notify)',
      'insert delivery_jobs (notify)',
      'insert delivery_jobs (notify)',
      'commit',
    ]);
    expect(await counts()).toEqual({ records: 150, feedEvents: 150, pendingJobs: 150 });
    // One notification per channel and transaction: PostgreSQL folds a transaction's identical ones into one.
    expect(await heardSoFar()).toEqual(['svc_events', 'svc_jobs']);
  });
});
