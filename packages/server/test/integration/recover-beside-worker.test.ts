import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { nextTurn } from '../../src/lib/turns.js';
import { BATCH, recoverTarget } from '../../src/webhooks/recover-replay.js';
import type { TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { queueContext } from '../helpers/queue-fixtures.js';

/**
 * SPEC §10: recover sends every dead job of the window back "for one more round" and answers how many. The review's
 * case: 100,000 dead jobs of a target with a one-step schedule, recovered while the worker ran: the answer was
 * {"jobs":100489}, 489 jobs having been recovered, failed again and been recovered a second time by the same request,
 * because after a full batch the walk started the slice again from its beginning. Here the worker is played by a loop
 * that, between the recovery's batches, fails every job the recovery sent back (once each).
 */
const JOBS = 4 * BATCH + 123;
const HOUR = 3_600_000;

describe.each(DIALECTS)('recover beside a worker that fails the recovered jobs again (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await queueContext(dialect);
  });
  afterEach(async () => t.close());

  it('gives each dead job one more round, once, and counts each once', async () => {
    const { db } = t.ctx.database;
    const t0 = t.ctx.clock.now() - HOUR;
    for (let s = 0; s < JOBS; s += 500) {
      const rows = Array.from({ length: Math.min(500, JOBS - s) }, (_, k) => {
        const at = t0 + s + k;
        return {
          id: newId('del', at), webhook_id: 'wh_a', event_id: 'evt_1', topic: 'record.created', collection: 'issues', record_id: 'rec_1',
          state: 'dead' as const, attempt_count: 1, round_start: 0, next_attempt_at: at, lease_id: null, lease_expires_at: null,
          last_error_code: 'http_status', last_error_message: 'The receiver answered 500.', created_at: at, updated_at: at, ordered: 0,
        };
      });
      await db.insertInto('delivery_jobs').values(rows).execute();
    }

    // The worker: every recovered job (pending, one attempt so far) makes its second attempt and dies again.
    let running = true;
    let failedAgain = 0;
    const worker = (async () => {
      while (running) {
        const res = await sql`update delivery_jobs set state = 'dead', attempt_count = 2, updated_at = ${t.ctx.clock.now()}
                               where webhook_id = 'wh_a' and state = 'pending' and attempt_count = 1`.execute(db);
        failedAgain += Number(res.numAffectedRows ?? 0);
        await nextTurn();
      }
    })();
    const answer = await recoverTarget(t.ctx, 'wh_a', { since: t0 - 1000, until: t.ctx.clock.now() });
    running = false;
    await worker;

    // The worker did fail jobs again while the recovery ran (else this test would prove nothing).
    expect(failedAgain).toBeGreaterThan(0);
    expect(answer).toEqual({ jobs: JOBS });
    // Recovered once: round_start is the attempt count at recovery (1); a second recovery would have made it 2.
    const rounds = await db.selectFrom('delivery_jobs').select(['round_start', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('round_start').execute();
    expect(rounds.map((r) => ({ round_start: Number(r.round_start), n: Number(r.n) }))).toEqual([{ round_start: 1, n: JOBS }]);
  }, 120_000);
});
