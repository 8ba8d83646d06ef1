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

  it('an ordered target\'s held jobs go out as the jobs before them complete, with no wake-up and no poll', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_POLL_MS: '600000' });
    const res = await rig.admin('POST', '/admin/v1/webhooks', { name: 'ordered', url: `${rig.receiver.url}/hook`, topics: ['record.created', 'record.updated'], ordering: 'record' });
    expect(res.statusCode).toBe(201);
    // Other targets, idle, so that the ordered one is not the only one a claim could ask.
    for (let i = 0; i < 5; i++) await rig.target(['record.deleted']);
    const record = await rig.createRecord({ title: 'v1' });
    for (let version = 2; version <= 6; version++) {
      const patched = await rig.app.inject({
        method: 'PATCH', url: `/api/v1/collections/issues/records/${record.id}`, headers: { ...rig.auth, 'if-match': `"${version - 1}"` }, payload: { data: { title: `v${version}` } },
      });
      expect(patched.statusCode, patched.body).toBe(200);
    }
    // The updates' jobs are written held (behind the create's, handed over) and wake nobody: each is released by the
    // completion of the one before it, and the worker marks its target due after that commit. Before, each waited for
    // the poll (here ten minutes) once a claim had found the target with nothing due.
    await waitFor(() => rig!.receiver.requests.length >= 6, 'six deliveries in order', 20_000);
    const versions = rig.receiver.requests.map((r) => (JSON.parse(r.body.toString()) as { payload: { record: { version: number } } }).payload.record.version);
    expect(versions).toEqual([1, 2, 3, 4, 5, 6]);
  }, 60_000);

  // A write ordering its job behind the record's pending job locks that job (enqueue.ts newestUnfinished) until it
  // commits; a claim meanwhile passes the job over (`for update skip locked`), finds nothing and marks the target idle.
  // The write's own job is held and woke nobody, so the pending job waited for the poll. The test above stalled so on
  // PostgreSQL under CPU stress in 3 runs of 15, 20 s each (the first job delivered, the second released and pending,
  // the others held, the target idle, no wake-up due); this one makes that interleaving on purpose. SQLite runs one
  // writer at a time: no claim runs while a write holds the job.
  it.runIf(dialect === 'postgres')('a job a write held locked while a claim passed it over goes out after that write, with no poll', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_POLL_MS: '600000' }, { startWorker: false });
    const res = await rig.admin('POST', '/admin/v1/webhooks', { name: 'ordered', url: `${rig.receiver.url}/hook`, topics: ['record.created', 'record.updated'], ordering: 'record' });
    expect(res.statusCode).toBe(201);
    const targetId = (res.json() as { id: string }).id;
    // The worker is stopped: the create's job is written pending, not handed over.
    const record = await rig.createRecord({ title: 'v1' });
    const claimedFor: string[][] = [];
    const claimed = Scheduler.prototype.claimed;
    vi.spyOn(Scheduler.prototype, 'claimed').mockImplementation(function (this: Scheduler, wants, results) {
      claimedFor.push(wants.filter((w, i) => results[i]!.jobs.length === 0).map((w) => w.webhookId));
      return claimed.call(this, wants, results);
    });
    const outbox = createOutbox(rig.ctx.database, rig.ctx.logger, null);
    const enqueued = await rig.ctx.database.db.transaction().execute(async (trx) => {
      const e = await outbox.enqueue(trx, { topic: 'record.updated', collection: 'issues', recordId: record.id, payload: { n: 2 } }, rig!.ctx.clock.now());
      // The pending job is locked now: the worker's first claim asks the target, passes the job over, finds nothing.
      await rig!.worker.start();
      await rig!.worker.whenIdle();
      return e;
    });
    expect(claimedFor.some((ids) => ids.includes(targetId))).toBe(true);
    expect(rig.receiver.requests).toHaveLength(0);
    await outbox.committed(enqueued);
    // Only slowness is at stake here (the stall it guards against lasted the ten-minute poll): a generous deadline.
    await waitFor(() => rig!.receiver.requests.length >= 2, 'both jobs delivered', 30_000);
    const topics = rig.receiver.requests.map((r) => (JSON.parse(r.body.toString()) as { topic: string }).topic);
    expect(topics).toEqual(['record.created', 'record.updated']);
  }, 60_000);

  it('a retry goes out when its time comes, with no wake-up and no poll', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_POLL_MS: '600000', SVC_WEBHOOK_RETRY_SCHEDULE: '0s,300ms,300ms' });
    let answered = 0;
    rig.receiver.setHandler((_req, res) => {
      answered += 1;
      res.writeHead(answered === 1 ? 500 : 200).end();
    });
    await rig.target(['record.created']);
    const record = await rig.createRecord({ title: 'retried' });
    // The first attempt fails; the retry is due 300 ms later (±10 %). The claim made when the attempt ended found
    // nothing due and marked the target idle: before, the retry then waited for the poll (here ten minutes).
    const job = () => rig!.ctx.database.db.selectFrom('delivery_jobs').select(['state', 'attempt_count']).where('record_id', '=', record.id as never).executeTakeFirstOrThrow();
    await waitFor(async () => (await job()).state === 'delivered', 'the retry delivered', 20_000);
    expect(await job()).toEqual({ state: 'delivered', attempt_count: 2 });
    expect(rig.receiver.requests).toHaveLength(2);
  }, 60_000);
});
