import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { UNWRITTEN_RESULTS_MAX } from '../../src/webhooks/worker/worker.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A worker's attempts may not run ahead of their results' writes without bound (worker.ts UNWRITTEN_RESULTS_MAX).
 * Outside review (a replay beside a worker whose receiver failed fast, PostgreSQL): each failure's count is written on
 * its target's row, a replay's batch held that row's lock, and the worker went on claiming and attempting while its
 * results queued unwritten: 40,000-49,000 jobs sat `delivering`, every one of them sent again had the process been
 * killed. Here the target's row is locked by a transaction of the test's own, so the completer's first write of
 * failures waits on it (a real lock, nothing stubbed): the worker must stop claiming at the bound, and once the lock
 * goes, every job is attempted exactly once. PostgreSQL only: on SQLite a claim needs the same single writer a
 * completion waits for, so claims cannot run ahead of a blocked completer there.
 */
const JOBS = 4000;

describe.runIf(POSTGRES_URL)('results a worker has not written yet bound its claims (postgres)', () => {
  let rig: DeliveryRig | null = null;
  let locker: pg.Client | null = null;
  afterEach(async () => {
    await locker?.end().catch(() => {});
    locker = null;
    await rig?.close();
    rig = null;
  });

  it(`a completer held by a lock on the target stops the claims at ${UNWRITTEN_RESULTS_MAX} unwritten results; released, each job is attempted once`, async () => {
    rig = await createDeliveryRig(
      'postgres',
      { SVC_WEBHOOK_RETRY_SCHEDULE: '1h,1h', SVC_WEBHOOK_TARGET_CONCURRENCY: '64', SVC_WEBHOOK_LEASE_SECONDS: '300' },
      { startWorker: false },
    );
    const { db } = rig.ctx.database;
    rig.receiver.setHandler((_req, res) => void res.writeHead(500).end('no'));
    const target = await rig.target(['record.created']);
    const now = Date.now();
    await sql`insert into events (id, topic, collection, record_id, payload, created_at) values ('evt_bound', 'record.created', 'issues', 'rec_bound', '{"n":1}', ${now})`.execute(db);
    await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at)
              select 'del_bound' || lpad(i::text, 6, '0'), ${target.id}, 'evt_bound', 'record.created', 'issues', 'rec_bound', 'pending', 0, 0, ${now}::bigint - i, ${now}, ${now}
                from generate_series(1, ${JOBS}) as i`.execute(db);

    // The target's row, locked as a replay's batch locks it: a failure's count (target-health-store.ts) waits.
    locker = new pg.Client({ connectionString: rig.database.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('select id from webhooks where id = $1 for update', [target.id]);

    await rig.worker.start();
    await waitFor(() => rig!.worker.unwrittenResults >= UNWRITTEN_RESULTS_MAX, `${UNWRITTEN_RESULTS_MAX} results unwritten`, 60_000, 20);
    // A claim round now claims nothing more; what was claimed before the bound is attempted. Settled when every job
    // claimed (delivering: the completer has committed nothing) has its result waiting.
    await rig.worker.claimNow();
    const delivering = async () => Number((await sql<{ n: string }>`select count(*) as n from delivery_jobs where state = 'delivering'`.execute(db)).rows[0]!.n);
    await waitFor(async () => rig!.worker.unwrittenResults === (await delivering()), 'every claimed job attempted', 60_000, 20);
    await rig.worker.claimNow();
    const claimed = await delivering();
    console.log(`claimed ${claimed} of ${JOBS} jobs while the completer waited; ${rig.receiver.requests.length} attempts`);
    // At the bound, plus what the claims before it had taken for the slots (a target's hold and its attempts in flight).
    expect(claimed).toBeLessThan(UNWRITTEN_RESULTS_MAX + 1024);
    expect(claimed).toBeLessThan(JOBS);
    expect(rig.receiver.requests.length).toBe(claimed);

    await locker.query('rollback');
    await waitFor(
      async () => Number((await sql<{ n: string }>`select count(*) as n from delivery_jobs where attempt_count = 1 and state = 'pending'`.execute(db)).rows[0]!.n) === JOBS,
      'every job attempted once and its retry written',
      120_000,
      50,
    );
    expect(rig.receiver.requests.length).toBe(JOBS);
    expect(new Set(rig.receiver.requests.map((r) => r.headers['svc-delivery'])).size).toBe(JOBS);
  }, 240_000);
});
