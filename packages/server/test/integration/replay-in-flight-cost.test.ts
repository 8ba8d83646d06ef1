import type { CompiledQuery, Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import type { EventId, WebhookId } from '../../src/lib/ids.js';
import { replayEvents } from '../../src/webhooks/queue/replay-events.js';
import { replayCandidatesQuery } from '../../src/webhooks/replay-store.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { POSTGRES_URL } from '../helpers/db.js';
import { jobsInFlightUnseen, statementWork } from '../helpers/plan-work.js';
import { StatementLog } from '../helpers/statement-log.js';

const T0 = Date.UTC(2026, 0, 1);
const A = 'wh_a' as WebhookId;
/** Jobs of the target in flight, each for an event of its own. */
const IN_FLIGHT = 10_000;
/** Events the replay is asked about: the first 20 have a job in flight, the rest none. */
const ASKED = 500;
const evt = (n: number) => `evt_${String(n).padStart(8, '0')}`;

/**
 * PostgreSQL keeps a target's jobs in flight out of the event's index (migration 021), so replay's guard asks for them
 * apart. The probe's case (/tmp, 50,000 events, a receiver answering 500, a worker beside the replay): the results of
 * the attempts waited in the worker's completer, the target's jobs in flight grew to 40,000, and a replay of 50,000
 * events took 49-51 s (25,000 after a kill -9: 36 s) against 1.2-1.4 s on SQLite; 80 % of it in the insert, whose plan
 * joined each of its 500 events against every job in flight (the planner, its statistics taken when few were, expected
 * one): 2.3 million rows compared for one batch of 500 with 4,600 in flight. Here the statistics are as stale (taken
 * while the jobs were pending), and the statements' work must follow the jobs in flight plus the events, not their
 * product.
 */
describe.runIf(POSTGRES_URL)('replay beside many jobs in flight (postgres)', () => {
  let t: TestContext;
  let db: Kysely<Tables>;

  beforeAll(async () => {
    t = await createTestContext('postgres');
    db = t.ctx.database.db;
    await jobsInFlightUnseen(db, { webhookId: A, events: IN_FLIGHT + ASKED - 20, inFlight: IN_FLIGHT, at: T0 });
  });
  afterAll(async () => t?.close());

  const work = (q: CompiledQuery) => statementWork(db, q);

  it("a batch's insert and a slice's candidates touch rows in proportion to the jobs in flight plus the events, and skip those in flight", async () => {
    const asked = Array.from({ length: ASKED }, (_, i) => evt(IN_FLIGHT - 20 + 1 + i) as EventId);
    const bound = 4 * (IN_FLIGHT + ASKED);

    const candidates = replayCandidatesQuery(db, { from: T0, afterId: evt(IN_FLIGHT - 20), throughId: null }, {
      webhookId: A, from: T0, to: T0 + 10 * IN_FLIGHT, recordTopics: ['record.created'], collections: null, otherTopics: [],
    });
    expect((await candidates.execute()).map((r) => r.id)).toEqual(asked.slice(20));
    expect(await work(candidates.compile())).toBeLessThan(bound);

    // The insert as replayEvents writes it, measured before it runs (afterwards every event has a job).
    const log = new StatementLog();
    const traced = db.withPlugin(log);
    await traced.transaction().execute(async (trx) => {
      await replayEvents(trx, t.ctx.database.caps, { now: T0, webhookId: A, ordered: false, eventIds: asked });
      throw new Error('rolled back');
    }).catch((err: Error) => expect(err.message).toBe('rolled back'));
    const insert = log.nodes.map((node) => db.getExecutor().compileQuery(node, { queryId: 'measured' } as never)).find((q) => /insert into delivery_jobs/.test(q.sql));
    expect(insert).toBeDefined();
    expect(await work(insert!)).toBeLessThan(bound);

    const created = await db.transaction().execute((trx) => replayEvents(trx, t.ctx.database.caps, { now: T0, webhookId: A, ordered: false, eventIds: asked }));
    expect(created).toHaveLength(ASKED - 20);
  }, 60_000);
});
