import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { iso } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import type { Enqueued } from '../webhooks/queue/enqueue.js';
import type { Outbox } from '../webhooks/outbox.js';
import type { Collection } from './collections-store.js';
import { validateData } from './fields.js';
import { findIdempotent, saveIdempotent } from './idempotency-store.js';
import { recordJson, type RecordJson } from './record-json.js';
import { deleteRecord, findRecord, insertRecord, updateRecord, type StoredRecord } from './records-store.js';

/**
 * Every record write goes through here: the row, its event and the delivery jobs commit in one transaction
 * (no committed write without its jobs, no job without a committed write); workers are woken after commit.
 */

function invalid(errors: ReturnType<typeof validateData>): never {
  throw new AppError('validation_failed', 'The record data does not match the collection.', { errors });
}

export interface CreateResult {
  status: number;
  record: RecordJson;
  replayed: boolean;
}

export async function createRecord(
  ctx: Context,
  outbox: Outbox,
  collection: Collection,
  data: Record<string, unknown>,
  idempotency?: { tokenId: string; key: string },
): Promise<CreateResult> {
  const errors = validateData(collection.fields, data, false);
  if (errors.length > 0) invalid(errors);
  const requestHash = sha256Hex(`${collection.name}\0${JSON.stringify(data)}`);
  const attempt = async (): Promise<CreateResult & { jobs: Enqueued | null }> =>
    ctx.database.write(async (trx) => {
      const now = ctx.clock.now();
      if (idempotency) {
        const seen = await findIdempotent(trx, idempotency.tokenId, idempotency.key, now);
        if (seen) {
          if (seen.requestHash !== requestHash) throw new AppError('conflict', 'This Idempotency-Key was used with a different request.');
          return { status: seen.status, record: JSON.parse(seen.response) as RecordJson, replayed: true, jobs: null };
        }
      }
      const record: StoredRecord = { id: newId('rec', now), collection: collection.name, version: 1, data, createdAt: now, updatedAt: now };
      await insertRecord(trx, record);
      const json = recordJson(record);
      const event = { topic: 'record.created' as const, collection: collection.name, recordId: record.id, payload: { record: json, occurredAt: iso(now) } };
      const jobs = await outbox.enqueue(trx, event, now);
      if (idempotency) await saveIdempotent(trx, idempotency.tokenId, idempotency.key, { requestHash, status: 201, response: JSON.stringify(json) }, now);
      return { status: 201, record: json, replayed: false, jobs };
    });
  let result: CreateResult & { jobs: Enqueued | null };
  try {
    result = await attempt();
  } catch (err) {
    // Two requests with one key raced: the loser's insert hit the key's primary key; the winner's answer is now readable.
    if (idempotency && ctx.database.caps.isUniqueViolation(err)) result = await attempt();
    else throw err;
  }
  await outbox.committed(result.jobs);
  return result;
}

export async function getRecord(ctx: Context, collection: string, id: string): Promise<StoredRecord> {
  const r = await findRecord(ctx.database.db, collection, id);
  if (!r) throw new AppError('not_found', 'No such record in this collection.');
  return r;
}

const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export async function patchRecord(ctx: Context, outbox: Outbox, collection: Collection, id: string, data: Record<string, unknown>, ifMatch: number | null): Promise<RecordJson> {
  const errors = validateData(collection.fields, data, true);
  if (errors.length > 0) invalid(errors);
  const outcome = await ctx.database.write(async (trx) => {
    const before = await findRecord(trx, collection.name, id);
    if (!before) throw new AppError('not_found', 'No such record in this collection.');
    if (ifMatch !== null && ifMatch !== before.version) throw new AppError('precondition_failed', `The record is at version ${before.version}.`);
    // Null-prototype objects and own-property reads: a data key named like a built-in is just a key.
    const next: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, before.data);
    for (const [k, v] of Object.entries(data)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    const changed = Object.keys(data).some((k) => !sameValue(Object.hasOwn(before.data, k) ? before.data[k] : null, data[k]));
    if (!changed) return { record: recordJson(before), jobs: null };
    const now = Math.max(ctx.clock.now(), before.updatedAt);
    const after: StoredRecord = { ...before, data: next, version: before.version + 1, updatedAt: now };
    if (!(await updateRecord(trx, after, before.version))) throw new AppError('precondition_failed', 'The record changed meanwhile.');
    const json = recordJson(after);
    const jobs = await outbox.enqueue(
      trx,
      { topic: 'record.updated', collection: collection.name, recordId: id, payload: { record: json, previous: recordJson(before), occurredAt: iso(now) } },
      now,
    );
    return { record: json, jobs };
  });
  await outbox.committed(outcome.jobs);
  return outcome.record;
}

export async function removeRecord(ctx: Context, outbox: Outbox, collection: Collection, id: string, ifMatch: number | null): Promise<void> {
  const jobs = await ctx.database.write(async (trx) => {
    const before = await findRecord(trx, collection.name, id);
    if (!before) throw new AppError('not_found', 'No such record in this collection.');
    if (ifMatch !== null && ifMatch !== before.version) throw new AppError('precondition_failed', `The record is at version ${before.version}.`);
    if (!(await deleteRecord(trx, collection.name, id, before.version))) throw new AppError('precondition_failed', 'The record changed meanwhile.');
    const now = ctx.clock.now();
    const event = { topic: 'record.deleted' as const, collection: collection.name, recordId: id, payload: { record: recordJson(before), occurredAt: iso(now) } };
    return outbox.enqueue(trx, event, now);
  });
  await outbox.committed(jobs);
}
