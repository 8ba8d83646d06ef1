import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/webhooks/envelope.js';
import { coalescedNotices, noticeTargets, type NoticeBatch } from '../../src/db/dialects/postgres-listen.js';
import { createOutbox } from '../../src/webhooks/outbox.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { listenTo, type Listener } from '../helpers/notifications.js';
import { NOW, seedTarget } from '../helpers/queue-fixtures.js';

const EVENT: EventInput = { topic: 'record.created', collection: 'issues', recordId: 'rec_1', payload: { n: 1 } };
const CHANNEL = 'svc_jobs';

/**
 * On PostgreSQL a write that makes pending jobs wakes every process's workers with a notice sent after its commit,
 * never from inside its transaction: PostgreSQL serializes the commits of notifying transactions (PreCommit_Notify's
 * lock is held through the commit's flush), so writes that notified committed one flush at a time. Notifications on a
 * channel arrive in commit order, so a marker sent by the test after the write tells when everything the write sent
 * has arrived.
 */
describe.skipIf(!POSTGRES_URL)('the workers\' wake-up follows the write\'s commit (postgres)', () => {
  let t: TestContext;
  let listener: Listener;
  const heardSoFar = async () => (await listener.heardSoFar()).map((n) => n.payload);

  beforeEach(async () => {
    t = await createTestContext('postgres');
    await seedTarget(t.ctx.database.db, 'wh_a');
    listener = await listenTo(t.database.url, [CHANNEL]);
  });
  afterEach(async () => {
    await listener.close();
    await t.close();
  });

  it('a committed write is heard once, from its after-commit step, naming the target; nothing from the commit itself', async () => {
    const { database, logger } = t.ctx;
    const outbox = createOutbox(database, logger, null);
    const enqueued = await database.write((trx) => outbox.enqueue(trx, EVENT, NOW));
    expect(enqueued.pending).toBe(1);
    expect(await heardSoFar()).toEqual([]);
    await outbox.committed(enqueued);
    expect(await heardSoFar()).toEqual(['wh_a']);
  });

  it('names each target of the pending jobs once, or none (everything) past what a payload holds', async () => {
    const { database, logger } = t.ctx;
    const outbox = createOutbox(database, logger, null);
    await seedTarget(database.db, 'wh_b');
    const two = await database.write(async (trx) => [await outbox.enqueue(trx, EVENT, NOW), await outbox.enqueue(trx, { ...EVENT, recordId: 'rec_2' }, NOW)]);
    expect(two.map((e) => e.pendingTargets)).toEqual([['wh_a', 'wh_b'], ['wh_a', 'wh_b']]);
    await outbox.committed(two);
    expect(await heardSoFar()).toEqual(['wh_a,wh_b']);
    // 302 targets of up to 29 characters: 8,759 bytes named, more than the 7,900 a payload may hold: one notice that
    // names none, which wakes every worker for everything.
    const ids = Array.from({ length: 300 }, (_, i) => `wh_${String(i).padStart(26, '0')}`);
    for (const id of ids) await seedTarget(database.db, id);
    const many = await database.write((trx) => outbox.enqueue(trx, { ...EVENT, recordId: 'rec_3' }, NOW));
    expect(many.pendingTargets).toHaveLength(302);
    await outbox.committed(many);
    expect((await heardSoFar()).slice(1)).toEqual(['']);
  });

  it('a write rolled back wakes nobody', async () => {
    const { database, logger } = t.ctx;
    const outbox = createOutbox(database, logger, null);
    await expect(
      database.write(async (trx) => {
        await outbox.enqueue(trx, EVENT, NOW);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await heardSoFar()).toEqual([]);
  });

  it('a write that makes no pending job sends nothing', async () => {
    const { database, logger } = t.ctx;
    const outbox = createOutbox(database, logger, null);
    const enqueued = await database.write((trx) => outbox.enqueue(trx, { ...EVENT, topic: 'record.deleted' }, NOW, 'wh_none'));
    expect(enqueued.pending).toBe(0);
    await outbox.committed(enqueued);
    expect(await heardSoFar()).toEqual([]);
  });

  it('wake-ups asked while one is on its way are merged into the next notice', async () => {
    const { signal } = t.ctx.database;
    // Asked in one turn: one notice for the three.
    await Promise.all([signal.notify(['wh_1']), signal.notify(['wh_2', 'wh_1']), signal.notify(['wh_3'])]);
    expect(await heardSoFar()).toEqual(['wh_1,wh_2,wh_3']);
    // The first goes at once; the next two, asked while it is on its way, go together after it.
    const first = signal.notify(['wh_4']);
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([first, signal.notify(['wh_5']), signal.notify(['wh_6'])]);
    expect((await heardSoFar()).slice(1)).toEqual(['wh_4', 'wh_5,wh_6']);
    // One that names none (everything) absorbs the targets asked with it.
    await Promise.all([signal.notify(['wh_7']), signal.notify(null)]);
    expect((await heardSoFar()).slice(3)).toEqual(['']);
  });
});

describe('a notice naming targets', () => {
  it('names them comma-separated, or none (everything) when there are none or more than a payload holds', () => {
    expect(noticeTargets(['wh_a', 'wh_b'])).toBe('wh_a,wh_b');
    expect(noticeTargets(null)).toBe('');
    expect(noticeTargets([])).toBe('');
    const many = Array.from({ length: 300 }, (_, i) => `wh_${String(i).padStart(26, '0')}`);
    expect(noticeTargets(many.slice(0, 263))).toBe(many.slice(0, 263).join(','));
    expect(noticeTargets(many)).toBe('');
  });
});

describe('notices sent one at a time', () => {
  /** A sender whose statements end when the test says: each statement's notices by channel, and a way to end it. */
  function held() {
    const calls: Array<{ notices: Record<string, readonly string[] | null>; end(err?: Error): void }> = [];
    const send = (batch: NoticeBatch) =>
      new Promise<void>((resolve, reject) => calls.push({ notices: Object.fromEntries(batch), end: (err) => (err ? reject(err) : resolve()) }));
    return { calls, notices: coalescedNotices(send) };
  }
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('sends one statement at a time; what is asked meanwhile waits, merged, and each call resolves with its own statement', async () => {
    const { calls, notices } = held();
    const done: string[] = [];
    const a = notices.send('jobs', ['wh_a']).then(() => done.push('a'));
    await turn();
    const b = notices.send('jobs', ['wh_b']).then(() => done.push('b'));
    const c = notices.send('jobs', ['wh_c', 'wh_b']).then(() => done.push('c'));
    await turn();
    expect(calls.map((x) => x.notices)).toEqual([{ jobs: ['wh_a'] }]);
    calls[0]!.end();
    await a;
    await turn();
    expect(done).toEqual(['a']);
    expect(calls.map((x) => x.notices)).toEqual([{ jobs: ['wh_a'] }, { jobs: ['wh_b', 'wh_c'] }]);
    calls[1]!.end();
    await Promise.all([b, c]);
    expect(done).toEqual(['a', 'b', 'c']);
    await notices.settled();
  });

  it('the channels asked in one turn go in one statement; `null` absorbs any list of its channel only', async () => {
    const { calls, notices } = held();
    const sent = Promise.all([notices.send('jobs', ['wh_a']), notices.send('events', null), notices.send('jobs', ['wh_b']), notices.send('other', ['wh_c']), notices.send('other', null)]);
    await turn();
    expect(calls.map((x) => x.notices)).toEqual([{ jobs: ['wh_a', 'wh_b'], events: null, other: null }]);
    calls[0]!.end();
    await sent;
  });

  it('a failed statement fails the calls it carried, not the next ones', async () => {
    const { calls, notices } = held();
    const a = notices.send('jobs', ['wh_a']);
    await turn();
    const b = notices.send('jobs', ['wh_b']);
    const c = notices.send('events', null);
    calls[0]!.end(new Error('connection lost'));
    await expect(a).rejects.toThrow('connection lost');
    await turn();
    expect(calls.map((x) => x.notices)).toEqual([{ jobs: ['wh_a'] }, { jobs: ['wh_b'], events: null }]);
    calls[1]!.end();
    await expect(Promise.all([b, c])).resolves.toEqual([undefined, undefined]);
    await notices.settled();
  });
});
