import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { exited, spawnSvc } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { iso } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';

/** Several `svc worker` processes share one PostgreSQL database: every job delivered once, never in flight twice. */
describe.skipIf(!POSTGRES_URL)('three workers on PostgreSQL', () => {
  let rig: DeliveryRig;
  beforeAll(async () => {
    rig = await createDeliveryRig('postgres', {}, { startWorker: false });
  });
  afterAll(async () => rig.close());

  it('drain thousands of jobs with no job in two processes at once', async () => {
    const JOBS = 3000;
    const target = await rig.target(['record.created']);
    // Seed due jobs directly (the write path is tested elsewhere): this measures the queue, not the API.
    const now = Date.now();
    const events = Array.from({ length: JOBS }, (_, i) => ({
      id: newId('evt', now), topic: 'record.created', collection: 'issues', record_id: newId('rec', now),
      payload: JSON.stringify({ n: i, occurredAt: iso(now) }), created_at: now,
    }));
    const rows = events.map((e) => ({
      id: newId('del', now), webhook_id: target.id, event_id: e.id, topic: e.topic, collection: e.collection, record_id: e.record_id,
      state: 'pending' as const, attempt_count: 0, round_start: 0, next_attempt_at: now, lease_id: null, lease_expires_at: null,
      last_error_code: null, last_error_message: null, created_at: now, updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) {
      await rig.ctx.database.db.insertInto('events').values(events.slice(i, i + 500)).execute();
      await rig.ctx.database.db.insertInto('delivery_jobs').values(rows.slice(i, i + 500)).execute();
    }

    const inFlight = new Set<string>();
    let overlaps = 0;
    rig.receiver.setHandler((req, res) => {
      const id = String(req.headers['svc-delivery']);
      if (inFlight.has(id)) overlaps++;
      inFlight.add(id);
      setTimeout(() => {
        inFlight.delete(id);
        res.writeHead(200).end('ok');
      }, 2);
    });
    const caFile = join(rig.database.dir, 'ca.pem');
    writeFileSync(caFile, rig.receiver.ca);
    const env = {
      SVC_DATABASE_URL: rig.database.url,
      SVC_SECRET_KEY: rig.ctx.config.secretKey!,
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: caFile,
      SVC_LOG_LEVEL: 'warn',
    };
    const started = Date.now();
    const workers = [spawnSvc(['worker'], env), spawnSvc(['worker'], env), spawnSvc(['worker'], env)];
    try {
      await waitFor(() => new Set(rig.receiver.requests.map((r) => r.headers['svc-delivery'])).size >= JOBS, `${JOBS} deliveries`, 120_000, 100);
    } finally {
      workers.forEach((w) => w.kill('SIGTERM'));
      await Promise.all(workers.map(exited));
    }
    const seconds = (Date.now() - started) / 1000;
    const times = rig.receiver.requests.map((r) => r.receivedAt.getTime());
    const drainSeconds = (Math.max(...times) - Math.min(...times)) / 1000;
    const ids = rig.receiver.requests.map((r) => String(r.headers['svc-delivery']));
    const duplicates = ids.length - new Set(ids).size;
    console.log(`[multi-worker] jobs=${JOBS} workers=3 seconds=${seconds.toFixed(1)} drain=${drainSeconds.toFixed(1)}s rate=${(JOBS / drainSeconds).toFixed(0)}/s (first to last delivery) duplicates=${duplicates} overlaps=${overlaps}`);
    expect(overlaps).toBe(0);
    expect(duplicates).toBe(0);
    const states = await rig.ctx.database.db.selectFrom('delivery_jobs').select(['state', (eb) => eb.fn.countAll().as('n')]).groupBy('state').execute();
    expect(states.map((s) => [s.state, Number(s.n)])).toEqual([['delivered', JOBS]]);
    const attempts = await rig.ctx.database.db.selectFrom('delivery_attempts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(attempts.n)).toBe(JOBS);
  }, 180_000);
});
