import { afterEach, describe, expect, it } from 'vitest';
import { UNSIGNABLE_DELAY_MS } from '../../src/webhooks/worker/completer.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A target whose sealed secret does not open with this process's key (a database restored onto an install with
 * another SVC_SECRET_KEY): its job is not attempted. It was released due at once, so the worker claimed, refused and
 * released it again without end (~7,000 times a second on SQLite, each claim a commit). It now waits a minute.
 */
describe.each(DIALECTS)('a target whose secret cannot be opened (%s)', (dialect) => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('keeps its job pending, unattempted and not due for a minute, instead of claiming it again at once', async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const { id } = await rig.target(['record.created']);
    const { db } = rig.ctx.database;
    // Sealed to another target's id: the same key cannot open it for this one.
    await db.updateTable('webhooks').set({ secret_sealed: rig.ctx.box.seal('whsec_c2VjcmV0', 'wh_00000000000000000000000000') }).where('id', '=', id as never).execute();
    const record = await rig.createRecord({ title: 'never signed' });
    const before = rig.ctx.clock.now();
    await rig.worker.start();
    const job = await waitFor(async () => {
      const row = await db.selectFrom('delivery_jobs').select(['id', 'state', 'attempt_count', 'next_attempt_at']).where('record_id', '=', record.id as never).executeTakeFirstOrThrow();
      // Claimed and released: due later than it was written.
      return Number(row.next_attempt_at) > before && row.state === 'pending' ? row : null;
    }, 'the job released');
    expect(Number(job.attempt_count)).toBe(0);
    // Not due before a minute has passed: no claim can take it again until then.
    expect(Number(job.next_attempt_at)).toBeGreaterThanOrEqual(before + UNSIGNABLE_DELAY_MS);
    await rig.worker.whenIdle();
    expect(rig.receiver.requests).toHaveLength(0);
    const attempts = (await rig.job(job.id)).attempts;
    expect(attempts).toEqual([]);
  });
});
