import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/webhooks/envelope.js';
import { noticeTargets } from '../../src/db/dialects/postgres-listen.js';
import { createOutbox } from '../../src/webhooks/outbox.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { listenTo, type Listener } from '../helpers/notifications.js';
import { NOW, seedTarget } from '../helpers/queue-fixtures.js';

const EVENT: EventInput = { topic: 'record.created', collection: 'issues', recordId: 'rec_1', payload: { n: 1 } };
const CHANNEL = 'svc_jobs';

/**
 * On PostgreSQL a write that makes pending jobs wakes every process's workers from its own jobs insert
 * (`pg_notify` in the statement, delivered at the commit), not with a statement of its own after the commit: one
 * round trip less for every create, which its answer no longer waits for. Notifications on a channel arrive in commit
 * order, so a marker sent by the test after the write tells when everything the write sent has arrived.
 */
describe.skipIf(!POSTGRES_URL)('the workers\' wake-up travels with the write (postgres)', () => {
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

  it('a committed write is heard once, from its commit, with no wake-up sent after it', async () => {
    const { database, logger } = t.ctx;
    const outbox = createOutbox(database, logger, null);
    const enqueued = await database.write((trx) => outbox.enqueue(trx, EVENT, NOW));
    expect(enqueued.pending).toBe(1);
    // Heard from the commit itself, before the write path's after-commit step runs, naming the target.
    expect(await heardSoFar()).toEqual(['wh_a']);
    // That step (hand-offs, in-process wake-ups) sends nothing more.
    await outbox.committed(enqueued);
    expect(await heardSoFar()).toEqual(['wh_a']);
  });

  it('names each target of the pending jobs once, or none (everything) past what a payload holds', async () => {
    const { database, logger } = t.ctx;
    const outbox = createOutbox(database, logger, null);
    await seedTarget(database.db, 'wh_b');
    const two = await database.write(async (trx) => [await outbox.enqueue(trx, EVENT, NOW), await outbox.enqueue(trx, { ...EVENT, recordId: 'rec_2' }, NOW)]);
    expect(two.map((e) => e.pendingTargets)).toEqual([['wh_a', 'wh_b'], ['wh_a', 'wh_b']]);
    expect(await heardSoFar()).toEqual(['wh_a,wh_b']);
    // 302 targets of up to 29 characters: 8,759 bytes named. The jobs go in by statements of at most 100 rows, each
    // with its notice, so each names its own and stays within the 7,900 bytes a payload may hold.
    const ids = Array.from({ length: 300 }, (_, i) => `wh_${String(i).padStart(26, '0')}`);
    for (const id of ids) await seedTarget(database.db, id);
    await database.write((trx) => outbox.enqueue(trx, { ...EVENT, recordId: 'rec_3' }, NOW));
    const later = (await heardSoFar()).slice(1);
    expect(later.length).toBeGreaterThan(1);
    for (const payload of later) expect(Buffer.byteLength(payload!)).toBeLessThanOrEqual(7_900);
    expect(later.flatMap((p) => p!.split(',')).sort()).toEqual([...ids, 'wh_a', 'wh_b'].sort());
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
