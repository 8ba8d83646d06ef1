import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { JOB_OVERHEAD_BYTES } from '../../src/webhooks/queue/claim.js';
import { HOLD_MAX_BYTES } from '../../src/webhooks/worker/scheduler.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, signatureValid, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12: a record of up to SVC_BODY_MAX_BYTES goes through the webhook path, and the worker's claims are budgeted
 * in bytes. An update of a 1 MiB record is a ~2 MB event; 48 such jobs are queued for one target whose concurrency
 * (64) would let the worker hold 128 of them (256 MB) without a byte budget.
 */
const JOBS = 48;
const TITLE = 1_000_000;

describe.each(DIALECTS)('deliveries of ~2 MB events (%s)', (dialect) => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('arrive whole and signed at an HTTPS receiver, while the worker holds no more than HOLD_MAX_BYTES of them (and one job)', async () => {
    rig = await createDeliveryRig(
      dialect,
      { SVC_WEBHOOK_CONCURRENCY: '64', SVC_WEBHOOK_TARGET_CONCURRENCY: '64', SVC_WEBHOOK_TIMEOUT_MS: '30000' },
      { startWorker: false },
    );
    const { id: webhookId, secret } = await rig.target(['record.updated']);
    // One through the API: a 1 MiB record, then its update (record and previous, ~2 MB).
    const record = await rig.createRecord({ title: 'a'.repeat(TITLE) });
    const patched = await rig.app.inject({ method: 'PATCH', url: `/api/v1/collections/issues/records/${record.id}`, headers: rig.auth, payload: { data: { title: 'b'.repeat(TITLE) } } });
    expect(patched.statusCode).toBe(200);
    // The rest made directly: ~2 MB payloads, each job pending for the target.
    const { db } = rig.ctx.database;
    const now = rig.ctx.clock.now();
    const payloads = new Map<string, string>();
    for (let i = 0; i < JOBS; i++) {
      const eventId = newId('evt', now);
      const recordId = newId('rec', now);
      const payload = JSON.stringify({ record: { id: recordId, data: { title: `${i}`.padEnd(TITLE, 'c') } }, previous: { id: recordId, data: { title: `${i}`.padEnd(TITLE, 'd') } }, occurredAt: new Date(now).toISOString(), eventId });
      await db.insertInto('events').values({ id: eventId, topic: 'record.updated', collection: 'issues', record_id: recordId, payload, created_at: now, tx: null, position: null, json_prefix: null }).execute();
      const jobId = newId('del', now);
      payloads.set(jobId, `{"version":"1","id":"${jobId}","topic":"record.updated","collection":"issues","recordId":"${recordId}","payload":${payload}}`);
      await db.insertInto('delivery_jobs').values({
        id: jobId, webhook_id: webhookId, event_id: eventId, topic: 'record.updated', collection: 'issues', record_id: recordId, state: 'pending',
        attempt_count: 0, round_start: 0, next_attempt_at: now, lease_id: null, lease_expires_at: null, last_error_code: null, last_error_message: null,
        created_at: now, updated_at: now, ordered: 0,
      }).execute();
    }
    const bodyBytes = Buffer.byteLength(payloads.values().next().value!);

    // The receiver holds every request until the worker has claimed all it will.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    rig.receiver.setHandler(async (_req, res) => {
      await gate;
      res.writeHead(200).end('ok');
    });
    await rig.worker.start();
    await rig.worker.claimNow();
    const held = await db.selectFrom('delivery_jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'delivering').executeTakeFirstOrThrow();
    console.log(`${dialect}: ${Number(held.n)} of ${JOBS + 1} jobs of ~${(bodyBytes / 1e6).toFixed(1)} MB held at once`);
    expect(Number(held.n)).toBeGreaterThan(1);
    // The budget, and at most one job more (a claim always takes one); without it all 49 were claimed at once.
    expect(Number(held.n) * (bodyBytes + JOB_OVERHEAD_BYTES)).toBeLessThanOrEqual(HOLD_MAX_BYTES + bodyBytes + JOB_OVERHEAD_BYTES);

    open();
    await waitFor(async () => {
      const row = await db.selectFrom('delivery_jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'delivered').executeTakeFirstOrThrow();
      return Number(row.n) === JOBS + 1;
    }, 'every job delivered', 120_000, 100);
    const received = rig.receiver.requests;
    expect(new Set(received.map((r) => r.headers['svc-delivery'])).size).toBe(JOBS + 1);
    for (const r of received) {
      expect(signatureValid(r.headers, r.body, [secret])).toBe(true);
      const expected = payloads.get(String(r.headers['svc-delivery']));
      if (expected !== undefined) {
        expect(r.body.length).toBe(expected.length);
        expect(r.body === expected).toBe(true);
      } else {
        // The API's own: its record and the state before, whole.
        const envelope = JSON.parse(r.body) as { recordId: string; payload: { record: { data: { title: string } }; previous: { data: { title: string } } } };
        expect(envelope.recordId).toBe(record.id);
        expect(envelope.payload.record.data.title).toBe('b'.repeat(TITLE));
        expect(envelope.payload.previous.data.title).toBe('a'.repeat(TITLE));
      }
    }
  }, 180_000);
});
