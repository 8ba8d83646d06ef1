import { afterEach, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createOutbox } from '../../src/webhooks/outbox.js';
import { Scheduler } from '../../src/webhooks/worker/scheduler.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A write's wake-up names the targets of the pending jobs it made (JobSignal; on PostgreSQL the notice's payload), and
 * a worker probes those again, not every target it knows. Before, every wake-up re-read the targets and made the next
 * claim ask all of them: with 300 idle targets, each job of one target cost a claim naming 300.
 */
describe.each(DIALECTS)('wake-ups naming targets (%s)', (dialect) => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await rig?.close();
    rig = undefined;
  });

  it('a job of one of 300 idle targets is claimed by a claim that asks that target alone', async () => {
    // No poll within the test: only wake-ups make claims.
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_POLL_MS: '600000' }, { startWorker: false });
    const first = await rig.target(['record.created']);
    const { db } = rig.ctx.database;
    const row = await db.selectFrom('webhooks').selectAll().where('id', '=', first.id as never).executeTakeFirstOrThrow();
    const now = rig.ctx.clock.now();
    const copies = Array.from({ length: 299 }, (_, i) => {
      const id = newId('wh', now);
      return { ...row, id: id as never, name: `receiver ${i + 2}`, secret_sealed: rig!.ctx.box.seal(first.secret, id) };
    });
    for (let i = 0; i < copies.length; i += 100) await db.insertInto('webhooks').values(copies.slice(i, i + 100)).execute();
    await rig.worker.start();
    await rig.worker.whenIdle();

    const planned: number[] = [];
    const plan = Scheduler.prototype.plan;
    vi.spyOn(Scheduler.prototype, 'plan').mockImplementation(function (this: Scheduler, ...args) {
      const wants = plan.apply(this, args);
      if (wants) planned.push(wants.length);
      return wants;
    });
    // Jobs left pending (no hand-off), each waking the workers as another process's write would.
    const outbox = createOutbox(rig.ctx.database, rig.ctx.logger, null);
    const target = copies[150]!.id as string;
    for (let n = 1; n <= 20; n++) {
      const enqueued = await rig.ctx.database.write((trx) =>
        outbox.enqueue(trx, { topic: 'record.created', collection: 'issues', recordId: `rec_${n}`, payload: { n } }, rig!.ctx.clock.now(), target),
      );
      expect(enqueued.pendingTargets).toEqual([target]);
      await outbox.committed(enqueued);
      await waitFor(() => rig!.receiver.requests.length >= n, `delivery ${n}`);
    }
    expect(new Set(rig.receiver.requests.map((r) => String(r.headers['svc-delivery']))).size).toBe(20);
    // Every claim asked the one target (a claim per job at most); none asked the other 299.
    expect(planned.length).toBeGreaterThanOrEqual(1);
    expect(planned.every((n) => n === 1)).toBe(true);
  }, 120_000);
});
