import pg from 'pg';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RUN_AGAIN_MAX, RunAgain } from '../../src/db/run-again.js';
import { createManyInTransaction, createRecord } from '../../src/records/changes.js';
import { findCollection } from '../../src/records/collections-store.js';
import { createOutbox, type Outbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { NOW, T0, seedTarget } from '../helpers/queue-fixtures.js';

/**
 * On PostgreSQL a process keeps the targets it read for its next record writes (webhooks/targets-cache.ts), and each
 * write's insert reads the targets' version (migration 022) on its own snapshot. A target changed anywhere (here: on a
 * connection of its own, as another process would) moves the version at that change's commit; the next write finds
 * it moved at its insert, rolls back and runs again with the targets read afresh. Every statement the pg client sends
 * for a write is recorded, as sent.
 */
describe.runIf(POSTGRES_URL)('targets kept across writes (postgres)', () => {
  let t: TestContext;
  let outbox: Outbox;
  /** A connection of its own: another process changing targets. */
  let other: pg.Client;

  beforeEach(async () => {
    t = await createTestContext('postgres');
    const fields = JSON.stringify([{ name: 'title', type: 'text', required: true, indexed: false }]);
    await sql`insert into collections (name, fields, created_at, updated_at) values ('docs', ${fields}, ${T0}, ${T0})`.execute(t.ctx.database.db);
    outbox = createOutbox(t.ctx.database, t.ctx.logger, null);
    other = new pg.Client({ connectionString: t.database.url });
    await other.connect();
  });
  afterEach(async () => {
    await other.end();
    await t.close();
  });

  const version = async (): Promise<number> => Number((await other.query('select version from targets_version')).rows[0].version);

  /** `fn` as if the second of reading afresh after a failed check had passed (the cache's clock, moved on). */
  async function afterTheWindow<T>(fn: () => Promise<T>): Promise<T> {
    const now = performance.now();
    const spy = vi.spyOn(performance, 'now').mockReturnValue(now + 1_001);
    try {
      return await fn();
    } finally {
      spy.mockRestore();
    }
  }

  /** The kinds of statement svc's pg clients send while `fn` runs, in order (not `other`'s). */
  async function recording(fn: () => Promise<unknown>): Promise<string[]> {
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as string | { text?: string };
      if (this !== other) sent.push(kind(typeof q === 'string' ? q : (q.text ?? '')));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      await fn();
    } finally {
      pg.Client.prototype.query = query;
    }
    return sent;
  }

  /** One create in a transaction of its own, through the shared outbox; the kinds of statement sent for it. */
  async function create(title: string): Promise<string[]> {
    const { database } = t.ctx;
    const collection = (await findCollection(database.db, 'docs'))!;
    return recording(() => database.write((trx) => createManyInTransaction(trx, outbox, [{ collection, data: { title } }], NOW)));
  }

  const kind = (text: string): string => {
    const s = text.trim().toLowerCase();
    if (s === 'begin' || s === 'commit' || s === 'rollback') return s;
    if (s.startsWith('select v.targets_version')) return 'targets';
    if (s.startsWith('with part0') && s.includes('svc_targets_at')) return 'insert (version)';
    if (s.startsWith('with part0')) return 'insert';
    if (/^select \* from "webhooks"/.test(s)) return 'targets (unchecked)';
    return s.slice(0, 40);
  };

  /** Each record's title and the targets its jobs went to. */
  const jobsByTitle = async (): Promise<Record<string, string[]>> => {
    const rows = (
      await other.query(`select r.data::json->>'title' as title, j.webhook_id from records r left join delivery_jobs j on j.record_id = r.id order by r.id, j.webhook_id`)
    ).rows as Array<{ title: string; webhook_id: string | null }>;
    const out: Record<string, string[]> = {};
    for (const r of rows) (out[r.title] ??= []).push(...(r.webhook_id === null ? [] : [r.webhook_id]));
    return out;
  };

  it('a second write plans with the targets the first one read: no read of its own, its insert checks their version', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    expect(await create('one')).toEqual(['begin', 'targets', 'insert (version)', 'commit']);
    expect(await create('two')).toEqual(['begin', 'insert (version)', 'commit']);
    expect(await jobsByTitle()).toEqual({ one: ['wh_a'], two: ['wh_a'] });
  });

  it('a target added elsewhere after they were kept: the next write runs again, once, and the new target gets its job', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    await create('before');
    await other.query(
      `insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at, ordering) values ('wh_b', 'b', 'https://receiver.example/b', '["record.created"]', 1, 'sealed', ${T0}, ${T0}, 'none')`,
    );
    // The check fails; the write runs again reading the targets in its own transaction, unchecked, as every write does
    // for a second after a failed check. Then the targets are kept again.
    expect(await create('after')).toEqual(['begin', 'insert (version)', 'rollback', 'begin', 'targets (unchecked)', 'insert', 'commit']);
    expect(await create('soon')).toEqual(['begin', 'targets (unchecked)', 'insert', 'commit']);
    expect(await afterTheWindow(() => create('later'))).toEqual(['begin', 'targets', 'insert (version)', 'commit']);
    expect(await afterTheWindow(() => create('then'))).toEqual(['begin', 'insert (version)', 'commit']);
    // The run that was rolled back wrote nothing: one record 'after', with both targets' jobs.
    expect(await jobsByTitle()).toEqual({ before: ['wh_a'], after: ['wh_a', 'wh_b'], soon: ['wh_a', 'wh_b'], later: ['wh_a', 'wh_b'], then: ['wh_a', 'wh_b'] });
  });

  it('a target disabled, deleted or narrowed elsewhere: the next write sees it at once', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    await seedTarget(t.ctx.database.db, 'wh_b');
    await seedTarget(t.ctx.database.db, 'wh_c');
    await create('all');
    await other.query(`update webhooks set enabled = 0, disabled_reason = 'manual', disabled_at = ${T0} where id = 'wh_a'`);
    await other.query(`update webhooks set deleted_at = ${T0}, secret_sealed = null where id = 'wh_b'`);
    await other.query(`update webhooks set topics = '["record.deleted"]' where id = 'wh_c'`);
    await create('none');
    expect(await jobsByTitle()).toEqual({ all: ['wh_a', 'wh_b', 'wh_c'], none: [] });
  });

  it('with no target at all: the version is kept alone, and the first target added elsewhere is seen by the next write', async () => {
    expect(await create('alone')).toEqual(['begin', 'targets', 'insert (version)', 'commit']);
    await seedTarget(t.ctx.database.db, 'wh_a');
    await create('seen');
    expect(await jobsByTitle()).toEqual({ alone: [], seen: ['wh_a'] });
  });

  it('what delivery updates as it goes (a rate bucket, a failing streak) leaves the version and the kept targets alone', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    await create('one');
    const before = await version();
    await other.query(`update webhooks set rate_window = 5, rate_used = 3 where id = 'wh_a'`);
    await other.query(`update webhooks set failing_since = ${T0}, failed_attempts = failed_attempts + 1 where id = 'wh_a'`);
    await other.query(`update webhooks set failing_since = null, failed_attempts = 0 where id = 'wh_a'`);
    expect(await version()).toBe(before);
    expect(await create('two')).toEqual(['begin', 'insert (version)', 'commit']);
    // Any other column is a change, the ones no record write reads included.
    await other.query(`update webhooks set name = 'renamed' where id = 'wh_a'`);
    expect(await version()).toBeGreaterThan(before);
  });

  it('the version moves up at a change\'s commit, by a random step a target row, and never for a change rolled back', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    await seedTarget(t.ctx.database.db, 'wh_b');
    const start = await version();
    const writer = new pg.Client({ connectionString: t.database.url });
    await writer.connect();
    try {
      await writer.query('begin');
      await writer.query(`update webhooks set url = 'https://receiver.example/moved' where id in ('wh_a', 'wh_b')`);
      // Not yet committed: neither the change nor the version is seen, and a write plans as before.
      expect(await version()).toBe(start);
      await writer.query('commit');
      const moved = await version();
      // Two rows, two steps of 1 to a million each.
      expect(moved - start).toBeGreaterThanOrEqual(2);
      expect(moved - start).toBeLessThanOrEqual(2_000_002);
      await writer.query('begin');
      await writer.query(`update webhooks set url = 'https://receiver.example/again' where id = 'wh_a'`);
      await writer.query('rollback');
      expect(await version()).toBe(moved);
    } finally {
      await writer.end();
    }
  });

  it('a transaction changing two targets beside one changing the second: neither waits on the version in a circle', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    await seedTarget(t.ctx.database.db, 'wh_b');
    const start = await version();
    const one = new pg.Client({ connectionString: t.database.url });
    const two = new pg.Client({ connectionString: t.database.url });
    await Promise.all([one.connect(), two.connect()]);
    try {
      await one.query('begin');
      await two.query('begin');
      // As auto-disable disables one failing target after another in one transaction, while an admin edits the second.
      await one.query(`update webhooks set name = 'one' where id = 'wh_a'`);
      await two.query(`update webhooks set name = 'two' where id = 'wh_b'`);
      const oneSecond = one.query(`update webhooks set url = 'https://receiver.example/one' where id = 'wh_b'`);
      // Had the first update taken the version's row at once, this commit would wait for `one`, which waits for it.
      await two.query('commit');
      await oneSecond;
      await one.query('commit');
      expect(await version()).toBeGreaterThanOrEqual(start + 3);
    } finally {
      await Promise.all([one.end(), two.end()]);
    }
  });

  /** One create as the records API makes it without an Idempotency-Key (Database.writeStatement); the kinds of statement sent. */
  async function createAlone(title: string): Promise<string[]> {
    const collection = (await findCollection(t.ctx.database.db, 'docs'))!;
    return recording(() => createRecord(t.ctx, outbox, collection, { title }));
  }

  it('a create without an Idempotency-Key is its one statement: no BEGIN, no COMMIT', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    expect(await createAlone('one')).toEqual(['targets', 'insert (version)']);
    expect(await createAlone('two')).toEqual(['insert (version)']);
    expect(await jobsByTitle()).toEqual({ one: ['wh_a'], two: ['wh_a'] });
  });

  it('a target added elsewhere: the create\'s statement fails its check, writes nothing, and the create runs again', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    await createAlone('before');
    await seedTarget(t.ctx.database.db, 'wh_b');
    expect(await createAlone('after')).toEqual(['insert (version)', 'targets (unchecked)', 'insert']);
    expect(await afterTheWindow(() => createAlone('later'))).toEqual(['targets', 'insert (version)']);
    expect(await jobsByTitle()).toEqual({ before: ['wh_a'], after: ['wh_a', 'wh_b'], later: ['wh_a', 'wh_b'] });
  });

  it('targets changing while writes run: a write runs at most twice, never fails for it, and its jobs are its targets\'', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    const collection = (await findCollection(t.ctx.database.db, 'docs'))!;
    let runs = 0;
    const counted = { ...t.ctx, database: { ...t.ctx.database, writeStatement: <T>(w: (db: never) => Promise<T>) => t.ctx.database.writeStatement((db) => (runs++, w(db as never))) } };
    for (let i = 0; i < 6; i++) {
      // A change of a target between every two creates: each create's kept targets are stale by then, or read afresh.
      await other.query(`update webhooks set name = 'n${i}' where id = 'wh_a'`);
      runs = 0;
      await createRecord(counted as typeof t.ctx, outbox, collection, { title: `c${i}` });
      expect(runs, `create c${i}`).toBeLessThanOrEqual(2);
    }
    const jobs = await jobsByTitle();
    expect(Object.values(jobs)).toEqual(Array.from({ length: 6 }, () => ['wh_a']));
  });

  it('a create with more jobs than one insert takes: its inserts go apart, so it runs in a transaction', async () => {
    for (let i = 0; i < 101; i++) await seedTarget(t.ctx.database.db, `wh_${String(i).padStart(3, '0')}`);
    const sent = await createAlone('wide');
    // The targets read outside; the inserts would be apart (101 jobs): a transaction, with nothing written before it.
    expect(sent.slice(0, 2)).toEqual(['targets', 'begin']);
    expect(sent.at(-1)).toBe('commit');
    expect((await jobsByTitle()).wide).toHaveLength(101);
  });

  it('a target ordering by record: the create runs in a transaction, where its look-up can lock the job it waits for', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a', { ordering: 'record' });
    const sent = await createAlone('ordered');
    // Read the targets outside, found one ordered before writing anything, and ran again in a transaction.
    expect(sent.slice(0, 2)).toEqual(['targets', 'begin']);
    expect(sent.filter((k) => k === 'insert (version)')).toHaveLength(1);
    expect(sent.at(-1)).toBe('commit');
    const job = (await other.query(`select webhook_id, ordered, state from delivery_jobs`)).rows;
    expect(job).toEqual([{ webhook_id: 'wh_a', ordered: 1, state: 'pending' }]);
  });

  it('creates running while a target is added elsewhere: each has its job for every target enabled when it began, none twice', async () => {
    await seedTarget(t.ctx.database.db, 'wh_a');
    const collection = (await findCollection(t.ctx.database.db, 'docs'))!;
    const afterAdd = new Set<string>();
    let added = false;
    let next = 0;
    const worker = async () => {
      while (next < 240) {
        const n = next++;
        if (n === 80) {
          await seedTarget(t.ctx.database.db, 'wh_b');
          added = true;
        }
        const title = `r${n}`;
        if (added) afterAdd.add(title);
        await createRecord(t.ctx, outbox, collection, { title });
      }
    };
    await Promise.all(Array.from({ length: 12 }, worker));
    const jobs = await jobsByTitle();
    expect(Object.keys(jobs)).toHaveLength(240);
    for (const [title, targets] of Object.entries(jobs)) {
      // Every record once, with wh_a's job once; wh_b's job once for every create begun after wh_b committed.
      expect(targets.filter((w) => w === 'wh_a'), title).toEqual(['wh_a']);
      expect(targets.filter((w) => w === 'wh_b').length, title).toBeLessThanOrEqual(1);
      if (afterAdd.has(title)) expect(targets, title).toEqual(['wh_a', 'wh_b']);
    }
    expect(afterAdd.size).toBeGreaterThan(100);
  });

  it(`a write that finds the targets changed at every run gives up after ${RUN_AGAIN_MAX} runs, with the error`, async () => {
    let runs = 0;
    await expect(
      t.ctx.database.write(async () => {
        runs++;
        throw new RunAgain('changed again');
      }),
    ).rejects.toThrow('changed again');
    expect(runs).toBe(RUN_AGAIN_MAX);
    // Any other error is thrown at once.
    runs = 0;
    await expect(
      t.ctx.database.write(async () => {
        runs++;
        throw new Error('other');
      }),
    ).rejects.toThrow('other');
    expect(runs).toBe(1);
  });
});
