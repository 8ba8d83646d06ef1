import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventInput } from '../../../src/webhooks/envelope.js';
import { claim } from '../../../src/webhooks/queue/claim.js';
import { complete } from '../../../src/webhooks/queue/complete.js';
import { ROWS_PER_INSERT } from '../../../src/db/compiled.js';
import { enqueue, enqueueMany, type JobHandoff } from '../../../src/webhooks/queue/enqueue.js';
import { idFloorAt, idTime } from '../../../src/lib/ids.js';
import { release } from '../../../src/webhooks/queue/release.js';
import { createTestContext, type TestContext } from '../../helpers/context.js';
import { DIALECTS } from '../../helpers/db.js';
import { NOW, T0, allJobs, okAttempt, seedEvent, seedJob, seedTarget, snapshot } from '../../helpers/queue-fixtures.js';

// Key order, unicode and escapes: the body must carry the payload's bytes exactly as JSON.stringify wrote them.
const EVENT: EventInput = { topic: 'record.created', collection: 'issues', recordId: 'rec_9', payload: { title: 'héllo "q" \u2028', n: 1, z: { b: [1, 2], a: null } } };
// A record change is a feed event: its payload names it (SPEC §7), after the fields it was given.
const payloadOf = (eventId: string) => JSON.stringify({ ...EVENT.payload, eventId });
const bodyOf = (id: string, eventId: string) => `{"version":"1","id":"${id}","topic":"record.created","collection":"issues","recordId":"rec_9","payload":${payloadOf(eventId)}}`;
const jobOf = (id: string, webhookId: string, eventId: string) => ({
  id, webhook_id: webhookId, event_id: eventId, topic: 'record.created', collection: 'issues', record_id: 'rec_9',
  state: 'pending', attempt_count: 0, round_start: 0, next_attempt_at: NOW, lease_id: null, lease_expires_at: null,
  last_error_code: null, last_error_message: null, created_at: NOW, updated_at: NOW, ordered: 0,
});

/** [*] → pending (or delivering, handed to this process's worker), in the record write's own transaction. */
describe.each(DIALECTS)('enqueue (%s)', (dialect) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await createTestContext(dialect);
    const { db } = t.ctx.database;
    await seedTarget(db, 'wh_a');
    await seedTarget(db, 'wh_b', { topics: ['record.deleted', 'record.created'] });
    await seedTarget(db, 'wh_off', { enabled: false });
    await seedTarget(db, 'wh_gone', { enabled: true, deletedAt: T0 + 1 });
    await seedTarget(db, 'wh_other', { topics: ['record.deleted'] });
  });
  afterEach(async () => t.close());

  const events = () => t.ctx.database.db.selectFrom('events').select(['id', 'topic', 'collection', 'record_id', 'payload', 'created_at']).execute();
  const positions = async () => (await t.ctx.database.db.selectFrom('events').select(['id', 'position']).orderBy('position').execute()).map((e) => [e.id, e.position === null ? null : Number(e.position)]);

  it('writes the event with its payload once and one pending job per enabled subscribed live target', async () => {
    const { db } = t.ctx.database;
    const out = await db.transaction().execute((trx) => enqueue(trx, t.ctx.database.caps, EVENT, { now: NOW, handoff: null }));
    expect(out.pending).toBe(2);
    expect(out.handedOver).toEqual([]);
    expect(await events()).toEqual([{ id: out.eventId, topic: 'record.created', collection: 'issues', record_id: 'rec_9', payload: payloadOf(out.eventId), created_at: NOW }]);
    expect(await positions()).toEqual([[out.eventId, 1]]);
    const jobs = await allJobs(db);
    expect(jobs.map((j) => j.webhook_id).sort()).toEqual(['wh_a', 'wh_b']);
    expect(jobs.map((j) => j.id).sort()).toEqual([...out.jobIds].sort());
    expect(jobs).toEqual(jobs.map((j) => jobOf(j.id, j.webhook_id, out.eventId)));
  });

  it('with exceptTargetId, leaves that subscribed target out (an operational event is never sent to the target it is about)', async () => {
    const { db } = t.ctx.database;
    const out = await db.transaction().execute((trx) => enqueue(trx, t.ctx.database.caps, EVENT, { now: NOW, handoff: null, exceptTargetId: 'wh_a' }));
    expect((await allJobs(db)).map((j) => j.webhook_id)).toEqual(['wh_b']);
    expect(out.jobIds).toHaveLength(1);
  });

  it('a change no target wants is still a feed event, with its payload, and makes no job', async () => {
    const { db } = t.ctx.database;
    const out = await db.transaction().execute((trx) => enqueue(trx, t.ctx.database.caps, { ...EVENT, topic: 'record.updated' }, { now: NOW, handoff: null }));
    expect(out).toEqual({ eventId: out.eventId, inFeed: true, jobIds: [], pending: 0, pendingTargets: [], handedOver: [], lockedTargets: [] });
    expect(await events()).toEqual([{ id: out.eventId, topic: 'record.updated', collection: 'issues', record_id: 'rec_9', payload: payloadOf(out.eventId), created_at: NOW }]);
    expect(await allJobs(db)).toEqual([]);
  });

  it('a webhook.test is not a feed event: no position, and no eventId in its payload', async () => {
    const { db } = t.ctx.database;
    const test = { topic: 'webhook.test' as const, collection: '_test', recordId: 'rec_00000000000000000000000000', payload: { test: true } };
    const out = await db.transaction().execute((trx) => enqueue(trx, t.ctx.database.caps, test, { now: NOW, handoff: null, onlyTargetId: 'wh_a' }));
    expect(out.inFeed).toBe(false);
    expect((await events())[0]!.payload).toBe('{"test":true}');
    expect(await positions()).toEqual([[out.eventId, null]]);
  });

  it('with onlyTargetId, writes a job for that live target alone, subscribed or not; none for a deleted one', async () => {
    const { db } = t.ctx.database;
    const one = await db.transaction().execute((trx) => enqueue(trx, t.ctx.database.caps, EVENT, { now: NOW, handoff: null, onlyTargetId: 'wh_other' }));
    expect(await allJobs(db)).toEqual([jobOf(one.jobIds[0]!, 'wh_other', one.eventId)]);
    // A disabled target's job is written and waits pending, as every job of a disabled target does.
    const off = await db.transaction().execute((trx) => enqueue(trx, t.ctx.database.caps, EVENT, { now: NOW, handoff: null, onlyTargetId: 'wh_off' }));
    expect(off.jobIds).toHaveLength(1);
    const gone = await db.transaction().execute((trx) => enqueue(trx, t.ctx.database.caps, EVENT, { now: NOW, handoff: null, onlyTargetId: 'wh_gone' }));
    expect(gone.jobIds).toEqual([]);
    expect((await allJobs(db)).map((j) => j.webhook_id).sort()).toEqual(['wh_off', 'wh_other']);
  });

  it('hands over the jobs the worker has a lease for, with the exact bytes a claim would send, and leaves the rest pending', async () => {
    const { db, caps } = t.ctx.database;
    const adopt = vi.fn();
    const handoff: JobHandoff = { leaseFor: (id) => (id === 'wh_a' ? { lease: 'lease_H', expiresAt: NOW + 30_000 } : null), adopt };
    const out = await db.transaction().execute((trx) => enqueue(trx, caps, EVENT, { now: NOW, handoff }));
    // Adoption is the caller's, after the commit: enqueue runs inside the transaction and must not start it.
    expect(adopt).not.toHaveBeenCalled();
    expect(out.pending).toBe(1);
    const jobs = await allJobs(db);
    const a = jobs.find((j) => j.webhook_id === 'wh_a')!;
    const b = jobs.find((j) => j.webhook_id === 'wh_b')!;
    expect(a).toEqual({ ...jobOf(a.id, 'wh_a', out.eventId), state: 'delivering', lease_id: 'lease_H', lease_expires_at: NOW + 30_000 });
    expect(b).toEqual(jobOf(b.id, 'wh_b', out.eventId));
    expect(out.handedOver).toEqual([
      {
        job: { id: a.id, webhookId: 'wh_a', lease: 'lease_H', leaseExpiresAt: NOW + 30_000, attemptCount: 0, roundStart: 0, body: Buffer.from(bodyOf(a.id, out.eventId)) },
        target: {
          id: 'wh_a', name: 'wh_a', url: 'https://receiver.example/hook', topics: ['record.created'], enabled: true, disabledReason: null, disabledAt: null, secretSealed: 'sealed-secret',
          collections: null, filter: null, changedFields: null, ordering: 'none',
          previousSecretSealed: null, previousSecretExpiresAt: null, createdAt: T0, updatedAt: T0,
          signatureScheme: 'svc', signatureAlgorithm: 'hmac-sha256', publicKey: null, headersSealed: null, headersShown: null, ratePerSecond: null,
          type: 'https', broker: null, subject: null, exchange: null, routingKey: null, stream: null, maxLength: null,
        },
      },
    ]);

    // The same job claimed (after the worker released it) must send the same bytes as the hand-off would have.
    expect(await release(db, caps, { now: NOW, jobs: [out.handedOver[0]!.job] })).toBe(1);
    const [claimed] = await claim(db, caps, { now: NOW, leaseMs: 1_000, targets: [{ webhookId: 'wh_a', limit: 5 }] });
    expect(claimed!.map((j) => [j.id, j.body])).toEqual([[a.id, out.handedOver[0]!.job.body]]);
  });

  it('leaves nothing behind when the surrounding transaction rolls back', async () => {
    const { db } = t.ctx.database;
    const handoff: JobHandoff = { leaseFor: () => ({ lease: 'lease_H', expiresAt: NOW + 30_000 }), adopt: () => {} };
    await expect(
      db.transaction().execute(async (trx) => {
        expect((await enqueue(trx, t.ctx.database.caps, EVENT, { now: NOW, handoff })).jobIds).toHaveLength(2);
        throw new Error('the record write failed');
      }),
    ).rejects.toThrow('the record write failed');
    expect(await events()).toEqual([]);
    expect(await snapshot(db)).toEqual({ jobs: [], attempts: [] });
  });
  it('[*] → held for an ordered target while the record has an unfinished job, never handed over; other records and targets as before', async () => {
    const { db, caps } = t.ctx.database;
    await db.updateTable('webhooks').set({ ordering: 'record' }).where('id', '=', 'wh_a').execute();
    const handoff: JobHandoff = { leaseFor: () => ({ lease: 'lease_H', expiresAt: NOW + 30_000 }), adopt: () => {} };
    const first = await db.transaction().execute((trx) => enqueue(trx, caps, EVENT, { now: NOW, handoff }));
    expect(first.handedOver.map((h) => h.job.webhookId).sort()).toEqual(['wh_a', 'wh_b']);
    const second = await db.transaction().execute((trx) => enqueue(trx, caps, EVENT, { now: NOW, handoff }));
    const other = await db.transaction().execute((trx) => enqueue(trx, caps, { ...EVENT, recordId: 'rec_8' }, { now: NOW, handoff }));
    expect(second.handedOver.map((h) => h.job.webhookId)).toEqual(['wh_b']);
    expect(second.pending).toBe(0);
    expect(other.handedOver.map((h) => h.job.webhookId).sort()).toEqual(['wh_a', 'wh_b']);
    const jobs = await allJobs(db);
    const stateOf = (id: string) => jobs.find((j) => j.id === id)!.state;
    expect(second.jobIds.map(stateOf).sort()).toEqual(['delivering', 'held']);
    expect(jobs.filter((j) => j.state === 'held').map((j) => [j.webhook_id, j.record_id, j.lease_id])).toEqual([['wh_a', 'rec_9', null]]);
    // The ordered target's jobs hold their records' places (migration 011); the other target's never do.
    expect(new Set(jobs.map((j) => `${j.webhook_id}:${j.ordered}`))).toEqual(new Set(['wh_a:1', 'wh_b:0']));
  });
  it('enqueueMany: the events in order at consecutive feed positions, over several insert statements, as enqueue would write them one by one', async () => {
    const { db, caps } = t.ctx.database;
    await db.updateTable('webhooks').set({ ordering: 'record' }).where('id', '=', 'wh_a').execute();
    // More events than one insert statement takes; rec_0 twice: the second's job waits behind the first's, unwritten yet.
    const many: EventInput[] = Array.from({ length: ROWS_PER_INSERT + 5 }, (_, i) => ({ ...EVENT, recordId: `rec_${i}` }));
    many.push({ ...EVENT, recordId: 'rec_0' });
    const handoff: JobHandoff = { leaseFor: () => ({ lease: 'lease_H', expiresAt: NOW + 30_000 }), adopt: () => {} };
    const out = await db.transaction().execute((trx) => enqueueMany(trx, caps, many, { now: NOW, handoff }));
    expect(out).toHaveLength(many.length);
    expect(await positions()).toEqual(out.map((e, i) => [e.eventId, i + 1]));
    const stored = new Map((await events()).map((e) => [e.id, e]));
    expect(out.map((e) => stored.get(e.eventId)!.record_id)).toEqual(many.map((e) => e.recordId));
    expect(out.map((e) => stored.get(e.eventId)!.payload)).toEqual(out.map((e) => JSON.stringify({ ...EVENT.payload, eventId: e.eventId })));
    const jobs = await allJobs(db);
    expect(jobs).toHaveLength(2 * many.length);
    expect(jobs.map((j) => j.id).sort()).toEqual(out.flatMap((e) => e.jobIds).sort());
    const last = out.at(-1)!;
    expect(last.handedOver.map((h) => h.job.webhookId)).toEqual(['wh_b']);
    expect(jobs.filter((j) => j.state === 'held').map((j) => [j.webhook_id, j.record_id, j.event_id])).toEqual([['wh_a', 'rec_0', last.eventId]]);
  });
  it('a held job written while its record\'s head is being completed is released, never stranded', async () => {
    const { db, caps } = t.ctx.database;
    await db.updateTable('webhooks').set({ ordering: 'record' }).where('id', '=', 'wh_a').execute();
    await seedEvent(db, 'evt_head');
    await seedJob(db, { id: 'del_00000000000000000000000000', webhookId: 'wh_a', eventId: 'evt_head', recordId: 'rec_9', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 60_000 }, ordered: true });
    let completing: Promise<Set<string>> | null = null;
    const written = await db.transaction().execute(async (trx) => {
      const out = await enqueue(trx, caps, EVENT, { now: NOW, handoff: null });
      // The head's completion starts while this write is open: on PostgreSQL it waits for the write's lock on the
      // head; on SQLite for the write's transaction. Either way it must then see the held job and release it.
      completing = complete(db, caps, { now: NOW + 1, done: [{ job: { id: 'del_00000000000000000000000000', lease: 'lease_A' }, attempt: okAttempt() }] });
      await new Promise((r) => setTimeout(r, 100));
      return out;
    });
    expect(await completing!).toEqual(new Set(['del_00000000000000000000000000']));
    const jobs = await allJobs(db);
    const mine = jobs.find((j) => written.jobIds.includes(j.id) && j.webhook_id === 'wh_a')!;
    expect(mine.state).toBe('pending');
  });
  it('a write held behind its record\'s pending job names the target for the wake-up after its commit (PostgreSQL), never behind a delivering one', async () => {
    const { db, caps } = t.ctx.database;
    await db.updateTable('webhooks').set({ ordering: 'record' }).where('id', '=', 'wh_a').execute();
    await seedEvent(db, 'evt_head');
    await seedJob(db, { id: 'del_00000000000000000000000000', webhookId: 'wh_a', eventId: 'evt_head', recordId: 'rec_9', state: 'pending', ordered: true });
    await seedJob(db, { id: 'del_00000000000000000000000001', webhookId: 'wh_a', eventId: 'evt_head', recordId: 'rec_8', state: 'delivering', lease: { id: 'lease_A', expiresAt: NOW + 60_000 }, ordered: true });
    const behindPending = await db.transaction().execute((trx) => enqueue(trx, caps, EVENT, { now: NOW, handoff: null }));
    const behindDelivering = await db.transaction().execute((trx) => enqueue(trx, caps, { ...EVENT, recordId: 'rec_8' }, { now: NOW, handoff: null }));
    // A claim running while the write held the pending job locked passed it over (skip locked); SQLite runs no claim then.
    expect(behindPending.lockedTargets).toEqual(dialect === 'postgres' ? ['wh_a'] : []);
    expect(behindDelivering.lockedTargets).toEqual([]);
    // wh_b does not order: its jobs are pending and named as ever.
    expect([behindPending.pendingTargets, behindDelivering.pendingTargets]).toEqual([['wh_b'], ['wh_b']]);
  });
  it('a held job\'s id sorts after the job it waits for, even one another process made in the same millisecond or later', async () => {
    const { db, caps } = t.ctx.database;
    await db.updateTable('webhooks').set({ ordering: 'record' }).where('id', '=', 'wh_a').execute();
    await seedEvent(db, 'evt_other');
    // Another process's job for the record, with the highest id its millisecond allows, made by a clock a minute
    // ahead of ours (and of every id this process made so far: ids never go back in time within a process).
    const ahead = Date.now() + 60_000;
    const theirs = `${idFloorAt('del', ahead).slice(0, 14)}${'Z'.repeat(16)}`;
    await seedJob(db, { id: theirs, webhookId: 'wh_a', eventId: 'evt_other', recordId: 'rec_9', state: 'pending', ordered: true });
    const ours = await db.transaction().execute((trx) => enqueue(trx, caps, EVENT, { now: NOW, handoff: null }));
    const held = (await allJobs(db)).find((j) => j.state === 'held')!;
    expect(ours.jobIds).toContain(held.id);
    expect(held.id > theirs).toBe(true);
    expect(idTime(held.id)).toBe(ahead + 1);
  });
});
