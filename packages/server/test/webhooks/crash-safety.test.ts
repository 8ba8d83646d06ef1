import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { exited, spawnSvc } from '../helpers/processes.js';
import { seeded, seedFrom } from '../helpers/seeded.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A `svc worker` process is killed with SIGKILL again and again while records are written; after a last restart
 * every committed event must reach the receiver (lost = 0). Duplicates are allowed (at least once) and counted.
 * How long each worker lives before its kill comes from a seeded generator: the seed is printed, and
 * SVC_CRASH_SEED=<seed> replays those kill times (where a kill lands in the worker's work still varies with the machine).
 */
describe.each(DIALECTS)('crash safety (%s)', (dialect) => {
  let rig: DeliveryRig;
  let env: Record<string, string>;
  beforeAll(async () => {
    rig = await createDeliveryRig(dialect, {}, { startWorker: false });
    const caFile = join(rig.database.dir, 'ca.pem');
    writeFileSync(caFile, rig.receiver.ca);
    env = {
      SVC_DATABASE_URL: rig.database.url,
      SVC_SECRET_KEY: rig.ctx.config.secretKey!,
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: caFile,
      SVC_WEBHOOK_LEASE_SECONDS: '2',
      SVC_WEBHOOK_TIMEOUT_MS: '1000',
      SVC_WEBHOOK_POLL_MS: '50',
      SVC_WEBHOOK_RETRY_SCHEDULE: '0s,100ms,100ms,100ms,100ms',
      SVC_LOG_LEVEL: 'warn',
    };
  });
  afterAll(async () => rig.close());

  it('loses no committed event when workers are killed mid-burst', async () => {
    await rig.target(['record.created']);
    // A little latency at the receiver keeps attempts in flight when the kill lands.
    rig.receiver.setHandler((_req, res) => void setTimeout(() => res.writeHead(200).end('ok'), 5));
    const committed: string[] = [];
    let writing = true;
    const writer = (async () => {
      while (writing && committed.length < 400) {
        const rec = await rig.createRecord({ title: `r${committed.length}` });
        committed.push(rec.id);
      }
    })();
    const seed = seedFrom('SVC_CRASH_SEED');
    const random = seeded(seed);
    console.log(`[crash-safety ${dialect}] seed ${seed} (SVC_CRASH_SEED=${seed} replays the kill times)`);
    let kills = 0;
    for (let round = 0; round < 6; round++) {
      const worker = spawnSvc(['worker'], env);
      await new Promise((r) => setTimeout(r, 600 + Math.floor(random() * 600)));
      worker.kill('SIGKILL');
      await exited(worker);
      kills++;
    }
    writing = false;
    await writer;
    const last = spawnSvc(['worker'], env);
    try {
      // Every event at the receiver, and every job recorded as delivered: a job whose attempt reached the receiver from
      // a worker killed before its completion was written stays `delivering` until its lease (2 s) expires and the last
      // worker sends it again (a duplicate, allowed), so the receiver alone can be complete before the jobs are.
      await waitFor(
        async () => {
          const ids = new Set(rig.receiver.requests.map((r) => JSON.parse(r.body).recordId));
          if (!committed.every((id) => ids.has(id))) return false;
          const open = await rig.ctx.database.db.selectFrom('delivery_jobs').select('id').where('state', '<>', 'delivered').limit(1).execute();
          return open.length === 0;
        },
        'every committed event at the receiver, every job delivered',
        60_000,
        200,
      );
    } finally {
      last.kill('SIGTERM');
      await exited(last);
    }
    const received = rig.receiver.requests.map((r) => String(r.headers['svc-delivery']));
    const unique = new Set(received);
    const lost = committed.length - new Set(rig.receiver.requests.map((r) => JSON.parse(r.body).recordId)).size;
    const duplicates = received.length - unique.size;
    console.log(`[crash-safety ${dialect}] seed=${seed} committed=${committed.length} kills=${kills} delivered=${unique.size} lost=${lost} duplicates=${duplicates}`);
    expect(lost, `SVC_CRASH_SEED=${seed}`).toBe(0);
    expect(unique.size, `SVC_CRASH_SEED=${seed}`).toBe(committed.length);
    const states = await rig.ctx.database.db.selectFrom('delivery_jobs').select('state').execute();
    expect(states.every((s) => s.state === 'delivered'), `SVC_CRASH_SEED=${seed}`).toBe(true);
  }, 180_000);
});
