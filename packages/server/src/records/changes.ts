import type { Kysely } from 'kysely';
import type { Context } from '../context.js';
import type { Tables } from '../db/tables.js';
import { AppError } from '../errors.js';
import { iso } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import type { Enqueued } from '../webhooks/queue/enqueue.js';
import type { Outbox } from '../webhooks/outbox.js';
import type { Collection } from './collections-store.js';
import { validateData } from './fields.js';
import { findIdempotent, saveIdempotent } from './idempotency-store.js';
import { judged } from './subscription-filter.js';
import { recordJson, type RecordJson } from './record-json.js';
import { deleteRecord, findRecord, recordsInsert, updateRecord, type StoredRecord } from './records-store.js';

/**
 * Every record write goes through here: the row, its event and the delivery jobs commit in one transaction
 * (no committed write without its jobs, no job without a committed write); workers are woken after commit.
 * The `…InTransaction` functions are the writes themselves, shared by a single write and a batch: they run inside
 * the caller's transaction and return what they enqueued, for the caller to hand to `outbox.committed` once the
 * transaction has committed.
 */

/**
 * Throws `validation_failed` when `data` does not fit the collection (`partial` for a PATCH), or the database's index
 * of an indexed text field cannot take its value (QueryDialect.indexedTextMaxBytes).
 */
export function checkData(collection: Collection, data: Record<string, unknown>, partial: boolean, indexedTextMaxBytes: number | null): void {
  const errors = validateData(collection.fields, data, partial, indexedTextMaxBytes);
  if (errors.length > 0) throw new AppError('validation_failed', 'The record data does not match the collection.', { errors });
}

export interface Written {
  record: RecordJson;
  jobs: Enqueued | null;
}

/**
 * A create's collection was deleted after the request looked it up (a `DELETE /admin/v1/collections/{name}`, forced
 * or of an empty collection, committed in between): the records' foreign key refused the insert. Answered as the
 * collection's absence is on that route (404 here; the public routes answer their 403), not as 500 `internal`.
 * `collection`: the one that is gone, when the database says which.
 */
export class CollectionGone extends AppError {
  constructor(readonly collection: string | null) {
    super('not_found', collection === null ? 'The collection was deleted meanwhile.' : `No collection named "${collection}".`);
  }
}

/**
 * A foreign key's refusal of a write, on either database (SQLite's extended code; PostgreSQL's 23503, whose detail
 * names the missing key): the records' reference to their collection is the only one a create can break.
 */
function foreignKeyRefusal(err: unknown): { collection: string | null } | null {
  if (typeof err !== 'object' || err === null) return null;
  const { code, detail } = err as { code?: unknown; detail?: unknown };
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return { collection: null };
  if (code !== '23503') return null;
  return { collection: /^Key \(collection\)=\((.*)\) is not present/.exec(String(detail ?? ''))?.[1] ?? null };
}

/** Inserts a validated record with its event and jobs. */
export async function createInTransaction(trx: Kysely<Tables>, outbox: Outbox, collection: Collection, data: Record<string, unknown>, now: number): Promise<Written> {
  return (await createManyInTransaction(trx, outbox, [{ collection, data }], now))[0]!;
}

/** Validated records of consecutive creates (a batch's), with their events and jobs: one insert per table for all. */
export async function createManyInTransaction(
  trx: Kysely<Tables>,
  outbox: Outbox,
  creates: ReadonlyArray<{ collection: Collection; data: Record<string, unknown> }>,
  now: number,
): Promise<Written[]> {
  const records = creates.map(({ collection, data }): StoredRecord => ({ id: newId('rec', now), collection: collection.name, version: 1, data, createdAt: now, updatedAt: now }));
  for (const r of records) outbox.note({ 'svc.collection': r.collection, 'svc.record.id': r.id });
  const json = records.map(recordJson);
  const occurredAt = iso(now);
  const events = creates.map(({ collection }, i) =>
    judged(collection, { topic: 'record.created' as const, collection: collection.name, recordId: records[i]!.id, payload: { record: json[i]!, occurredAt } }),
  );
  // The records go in with their events and jobs: on PostgreSQL one statement for the three (a round trip each before).
  let jobs: Awaited<ReturnType<Outbox['enqueueMany']>>;
  try {
    jobs = await outbox.enqueueMany(trx, events, now, [recordsInsert(records)]);
  } catch (err) {
    const refused = foreignKeyRefusal(err);
    if (refused) throw new CollectionGone(refused.collection ?? (new Set(records.map((r) => r.collection)).size === 1 ? records[0]!.collection : null));
    throw err;
  }
  return json.map((record, i) => ({ record, jobs: jobs[i]! }));
}

/** Values as JSON says: a primitive compared as itself (JSON.stringify of a 1 MB text is a copy), others by their JSON. */
const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && JSON.stringify(a) === JSON.stringify(b));

/** Sets validated fields; a PATCH that changes nothing writes nothing and enqueues nothing. */
export async function patchInTransaction(
  trx: Kysely<Tables>,
  outbox: Outbox,
  collection: Collection,
  change: { id: string; data: Record<string, unknown>; ifMatch: number | null },
  clockNow: number,
): Promise<Written> {
  const { id, data, ifMatch } = change;
  outbox.note({ 'svc.collection': collection.name, 'svc.record.id': id });
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
  const now = Math.max(clockNow, before.updatedAt);
  const after: StoredRecord = { ...before, data: next, version: before.version + 1, updatedAt: now };
  if (!(await updateRecord(trx, after, before.version))) throw new AppError('precondition_failed', 'The record changed meanwhile.');
  const json = recordJson(after);
  const jobs = await outbox.enqueue(
    trx,
    judged(collection, { topic: 'record.updated' as const, collection: collection.name, recordId: id, payload: { record: json, previous: recordJson(before), occurredAt: iso(now) } }),
    now,
  );
  return { record: json, jobs };
}

export async function removeInTransaction(
  trx: Kysely<Tables>,
  outbox: Outbox,
  collection: Collection,
  change: { id: string; ifMatch: number | null },
  now: number,
): Promise<Enqueued> {
  const { id, ifMatch } = change;
  outbox.note({ 'svc.collection': collection.name, 'svc.record.id': id });
  const before = await findRecord(trx, collection.name, id);
  if (!before) throw new AppError('not_found', 'No such record in this collection.');
  if (ifMatch !== null && ifMatch !== before.version) throw new AppError('precondition_failed', `The record is at version ${before.version}.`);
  if (!(await deleteRecord(trx, collection.name, id, before.version))) throw new AppError('precondition_failed', 'The record changed meanwhile.');
  const event = judged(collection, { topic: 'record.deleted' as const, collection: collection.name, recordId: id, payload: { record: recordJson(before), occurredAt: iso(now) } });
  return outbox.enqueue(trx, event, now);
}

export interface Idempotency {
  tokenId: string;
  key: string;
  /** What makes two requests "the same": a repeat with the key and another hash is `conflict`. */
  requestHash: string;
}

export interface Replayable<T> {
  status: number;
  value: T;
  replayed: boolean;
}

/**
 * Runs `work` in one write transaction under an optional Idempotency-Key: a repeat of the same request returns the
 * stored answer (`replayed`), the same key with another request is `conflict`. The outbox hears of the jobs once,
 * after the commit.
 */
export async function writeOnce<T>(
  ctx: Context,
  outbox: Outbox,
  idempotency: Idempotency | undefined,
  work: (trx: Kysely<Tables>, now: number, outbox: Outbox) => Promise<{ status: number; value: T; jobs: ReadonlyArray<Enqueued | null> }>,
  /** `oneStatement`: `work` writes with one statement (a create), so it may run outside a transaction. */
  opts: { oneStatement?: boolean } = {},
): Promise<Replayable<T>> {
  // A create without a key writes with one statement (its record, event and jobs): on PostgreSQL no BEGIN and no
  // COMMIT then (Database.writeStatement). A key's read and save, or any other write's several statements, need the
  // transaction.
  const oneStatement = opts.oneStatement === true && !idempotency;
  const write = <R>(w: (trx: Kysely<Tables>) => Promise<R>) => (oneStatement ? ctx.database.writeStatement(w) : ctx.database.write(w));
  const attempt = async (traced: Outbox): Promise<Replayable<T> & { jobs: ReadonlyArray<Enqueued | null> }> =>
    write(async (trx: Kysely<Tables>) => {
      const now = ctx.clock.now();
      if (idempotency) {
        const seen = await findIdempotent(trx, idempotency.tokenId, idempotency.key, now);
        if (seen) {
          if (seen.requestHash !== idempotency.requestHash) throw new AppError('conflict', 'This Idempotency-Key was used with a different request.');
          return { status: seen.status, value: JSON.parse(seen.response) as T, replayed: true, jobs: [] };
        }
      }
      const done = await work(trx, now, traced);
      if (idempotency) {
        const stored = { requestHash: idempotency.requestHash, status: done.status, response: JSON.stringify(done.value) };
        await saveIdempotent(trx, idempotency.tokenId, idempotency.key, stored, now);
      }
      return { ...done, replayed: false };
    });
  // The write's transaction span (SPEC §15), a child of the request's: the records it wrote are noted on it.
  const result = await outbox.inWriteSpan(async (traced) => {
    try {
      return await attempt(traced);
    } catch (err) {
      // Two requests with one key raced: the loser's insert hit the key's primary key; the winner's answer is now readable.
      if (idempotency && ctx.database.caps.isUniqueViolation(err)) return await attempt(traced);
      throw err;
    }
  });
  void outbox.committed(result.jobs);
  return { status: result.status, value: result.value, replayed: result.replayed };
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
  checkData(collection, data, false, ctx.database.caps.query.indexedTextMaxBytes);
  // Only a request with an Idempotency-Key is compared with an earlier one: the data's text and its hash are made for
  // it alone (for a 1 KB record ~55,000 instructions, 2.7 % of a create, W2 by callgrind).
  const result = await writeOnce<RecordJson>(
    ctx,
    outbox,
    idempotency && { ...idempotency, requestHash: sha256Hex(`${collection.name}\0${JSON.stringify(data)}`) },
    async (trx, now, traced) => {
      const written = await createInTransaction(trx, traced, collection, data, now);
      return { status: 201, value: written.record, jobs: [written.jobs] };
    },
    { oneStatement: true },
  );
  return { status: result.status, record: result.value, replayed: result.replayed };
}

export async function getRecord(ctx: Context, collection: string, id: string): Promise<StoredRecord> {
  const r = await findRecord(ctx.database.db, collection, id);
  if (!r) throw new AppError('not_found', 'No such record in this collection.');
  return r;
}

export async function patchRecord(ctx: Context, outbox: Outbox, collection: Collection, id: string, data: Record<string, unknown>, ifMatch: number | null): Promise<RecordJson> {
  checkData(collection, data, true, ctx.database.caps.query.indexedTextMaxBytes);
  const written = await outbox.inWriteSpan((traced) => ctx.database.write((trx: Kysely<Tables>) => patchInTransaction(trx, traced, collection, { id, data, ifMatch }, ctx.clock.now())));
  void outbox.committed([written.jobs]);
  return written.record;
}

export async function removeRecord(ctx: Context, outbox: Outbox, collection: Collection, id: string, ifMatch: number | null): Promise<void> {
  const jobs = await outbox.inWriteSpan((traced) => ctx.database.write((trx: Kysely<Tables>) => removeInTransaction(trx, traced, collection, { id, ifMatch }, ctx.clock.now())));
  void outbox.committed([jobs]);
}
