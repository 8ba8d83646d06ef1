import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/webhooks/envelope.js';
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
    // Heard from the commit itself, before the write path's after-commit step runs.
    expect(await heardSoFar()).toEqual(['']);
    // That step (hand-offs, in-process wake-ups) sends nothing more.
    await outbox.committed(enqueued);
    expect(await heardSoFar()).toEqual(['']);
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
