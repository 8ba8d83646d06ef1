import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { HOLD_ROUNDS } from '../../src/webhooks/worker/scheduler.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, signatureValid, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

/**
 * More enabled targets than a process holds jobs (HOLD_ROUNDS × SVC_WEBHOOK_CONCURRENCY, 1,024 by default): each
 * target's share of the hold is below one job. The worker's claims once asked for a fraction of a job a target
 * (0.122 at 1,050 targets), which both databases refuse as a LIMIT: every claim failed, and jobs that were not handed
 * over by the writing process itself (these, written before the worker started) waited for good.
 */
const TARGETS = 1_050;

describe.each(DIALECTS)('a worker with %s and more targets than it holds jobs', (dialect) => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it(`claims and delivers a job of every one of ${TARGETS} targets`, async () => {
    expect(TARGETS).toBeGreaterThan(HOLD_ROUNDS * 64);
    // 1,050 TLS connections to a receiver in this process: the rig's 2 s attempt timeout is too short on SQLite, whose
    // statements share the thread.
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_CONCURRENCY: '64', SVC_WEBHOOK_TIMEOUT_MS: '30000' }, { startWorker: false });
    const first = await rig.target(['record.created']);
    // The others copied from the first row (its secret, the same receiver); made through the API they would take minutes.
    const { db } = rig.ctx.database;
    const row = await db.selectFrom('webhooks').selectAll().where('id', '=', first.id as never).executeTakeFirstOrThrow();
    const now = rig.ctx.clock.now();
    const copies = Array.from({ length: TARGETS - 1 }, (_, i) => {
      const id = newId('wh', now);
      // A secret is sealed to its target's id.
      return { ...row, id: id as never, name: `receiver ${i + 2}`, secret_sealed: rig!.ctx.box.seal(first.secret, id) };
    });
    for (let i = 0; i < copies.length; i += 100) await db.insertInto('webhooks').values(copies.slice(i, i + 100)).execute();
    // Written before the worker starts: only a claim can deliver these.
    const record = await rig.createRecord({ title: 'to every target' });
    const jobs = await db.selectFrom('delivery_jobs').select(({ fn }) => fn.countAll<number>().as('n')).where('record_id', '=', record.id as never).executeTakeFirstOrThrow();
    expect(Number(jobs.n)).toBe(TARGETS);
    await rig.worker.start();
    await waitFor(() => rig!.receiver.requests.length >= TARGETS, `${TARGETS} deliveries`, 60_000);
    const ids = new Set(rig.receiver.requests.map((r) => String(r.headers['svc-delivery'])));
    expect(ids.size).toBe(TARGETS);
    expect(rig.receiver.requests.every((r) => signatureValid(r.headers, r.body, [first.secret]))).toBe(true);
    await waitFor(async () => {
      const left = await db.selectFrom('delivery_jobs').select(({ fn }) => fn.countAll<number>().as('n')).where('state', '<>', 'delivered').executeTakeFirstOrThrow();
      return Number(left.n) === 0;
    }, 'every job delivered');
  }, 120_000);
});
