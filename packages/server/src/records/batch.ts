import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Enqueued } from '../webhooks/queue/enqueue.js';
import type { Outbox } from '../webhooks/outbox.js';
import { CollectionGone, checkData, createManyInTransaction, patchInTransaction, removeInTransaction, writeOnce, type Replayable } from './changes.js';
import { findCollection, type Collection } from './collections-store.js';
import type { RecordJson } from './record-json.js';
import { recordSizes } from './records-store.js';
import { nextTurn } from '../lib/turns.js';

export interface BatchOperation {
  method: 'POST' | 'PATCH' | 'DELETE';
  collection: string;
  id?: string;
  data?: Record<string, unknown>;
  ifMatch?: number;
}

/**
 * Who runs the batch: the id idempotency keys are scoped to, and the check that throws `forbidden` for a collection
 * (auth/bearer-policy.ts, through the public routes' hook), which asks `exists` when the answer depends on it.
 */
export interface BatchCaller {
  tokenId: string;
  authorize(collection: string, exists: (name: string) => Promise<boolean>): Promise<void>;
}

export type BatchResult = { status: 201 | 200; record: RecordJson } | { status: 204 };

/**
 * The records a batch's PATCH and DELETE operations change may hold at most this many times SVC_BODY_MAX_BYTES in
 * all (16 MiB by default). The body bounds what a batch sends, not what it touches: 100 PATCHes of one field each
 * (10 KB) on records of 1 MB read, rewrote and sent out 100 MB and more, in one transaction that held the event loop
 * 4-12 s and the process at 630-690 MB of RSS.
 */
export const BATCH_RECORD_BYTES_PER_BODY = 16;
/** After an operation on a record this large, the batch lets other work run before the next one (its transaction waits). */
const YIELD_AFTER_BYTES = 64 * 1024;

/** An operation's error as the batch's: same status and code, its paths under `/operations/<i>`. */
function asBatchError(err: unknown, index: number): unknown {
  if (!(err instanceof AppError)) return err;
  const base = `/operations/${index}`;
  const errors = err.extra.errors?.map((e) => ({ ...e, path: `${base}${e.path}` })) ?? [{ path: base, message: err.message }];
  return new AppError(err.code, `Operation ${index}: ${err.message}`, { ...err.extra, errors });
}

/** Fields a method takes and needs; the body schema allows all of them on every operation. */
function checkShape(op: BatchOperation): void {
  const errors: Array<{ path: string; message: string }> = [];
  const needs = (key: keyof BatchOperation, wanted: boolean) => {
    if (wanted && op[key] === undefined) errors.push({ path: `/${key}`, message: `is required for ${op.method}` });
    if (!wanted && op[key] !== undefined) errors.push({ path: `/${key}`, message: `is not allowed for ${op.method}` });
  };
  needs('id', op.method !== 'POST');
  needs('data', op.method !== 'DELETE');
  if (op.method === 'POST') needs('ifMatch', false);
  if (errors.length > 0) throw new AppError('validation_failed', 'The operation is malformed.', { errors });
}

/**
 * The token may write every collection the batch names, all of which exist (a missing one is refused like a
 * forbidden one, so names cannot be probed): decided for every operation before any of them runs.
 */
async function authorizeAll(ctx: Context, may: BatchCaller['authorize'], operations: readonly BatchOperation[]): Promise<Collection[]> {
  const known = new Map<string, Collection | null>();
  const lookUp = async (name: string): Promise<Collection | null> => {
    if (!known.has(name)) known.set(name, await findCollection(ctx.database.db, name));
    return known.get(name)!;
  };
  const out: Collection[] = [];
  for (const [i, op] of operations.entries()) {
    try {
      await may(op.collection, async (name) => (await lookUp(name)) !== null);
      out.push((await lookUp(op.collection))!);
    } catch (err) {
      throw asBatchError(err, i);
    }
  }
  return out;
}

/**
 * The sizes of the records the batch's PATCH and DELETE operations name, by collection and id; `payload_too_large`
 * when together they are over the batch's limit, before anything is written. A record may grow between this read and
 * the operation, by at most what a body carries.
 */
async function changedRecordSizes(ctx: Context, operations: readonly BatchOperation[]): Promise<Map<string, number>> {
  const byCollection = new Map<string, string[]>();
  for (const op of operations) {
    if (op.method === 'POST' || typeof op.id !== 'string') continue;
    const ids = byCollection.get(op.collection) ?? [];
    if (!ids.includes(op.id)) ids.push(op.id);
    byCollection.set(op.collection, ids);
  }
  const sizes = new Map<string, number>();
  for (const [collection, ids] of byCollection) {
    for (const [id, bytes] of await recordSizes(ctx.database.db, collection, ids)) sizes.set(`${collection}\0${id}`, bytes);
  }
  // Each operation counts its record, so 100 PATCHes of one record count it 100 times, as they rewrite it each time.
  const total = operations.reduce((sum, op) => sum + (op.method === 'POST' ? 0 : (sizes.get(`${op.collection}\0${op.id}`) ?? 0)), 0);
  const limit = BATCH_RECORD_BYTES_PER_BODY * ctx.config.bodyMaxBytes;
  if (total > limit) {
    throw new AppError('payload_too_large', `The records this batch changes hold ${total} bytes, over the batch's limit of ${limit} (${BATCH_RECORD_BYTES_PER_BODY} × SVC_BODY_MAX_BYTES); split it into smaller batches.`, {
      errors: [{ path: '/operations', message: `changes ${total} bytes of records, at most ${limit}` }],
    });
  }
  return sizes;
}

/**
 * `POST /api/v1/batch`: every operation in one transaction, in order, each with its event and jobs, through the
 * same writes as a single request; the first that fails rolls all of them back. The outbox hears of every job
 * once, after the commit.
 */
export async function runBatch(
  ctx: Context,
  outbox: Outbox,
  caller: BatchCaller,
  operations: readonly BatchOperation[],
  idempotencyKey: string | undefined,
): Promise<Replayable<BatchResult[]>> {
  const collections = await authorizeAll(ctx, (c, exists) => caller.authorize(c, exists), operations);
  const sizes = await changedRecordSizes(ctx, operations);
  // Hashed only under a key: the hash is of the whole body, and most batches carry none.
  const idempotency = idempotencyKey === undefined ? undefined : { tokenId: caller.tokenId, key: idempotencyKey, requestHash: sha256Hex(`batch\0${JSON.stringify(operations)}`) };
  return writeOnce<BatchResult[]>(ctx, outbox, idempotency, async (trx, now, outbox) => {
    const results: BatchResult[] = [];
    const jobs: Array<Enqueued | null> = [];
    // Consecutive creates are written together, before the next operation that reads what came before it (a PATCH
    // or DELETE) and at the end. A create cannot fail once its data checks, so the first failing operation is still
    // the one reported, with every operation before it done.
    let creates: Array<{ collection: Collection; data: Record<string, unknown>; index: number }> = [];
    /** Errors already said of the operation they belong to (an earlier one than the operation that wrote the creates). */
    const placed = new WeakSet<object>();
    const writeCreates = async () => {
      if (creates.length === 0) return;
      let written: Awaited<ReturnType<typeof createManyInTransaction>>;
      try {
        written = await createManyInTransaction(trx, outbox, creates, now);
      } catch (err) {
        // A collection deleted since authorizeAll: refused as a missing one is there, at its first create.
        if (!(err instanceof CollectionGone)) throw err;
        const first = creates.find((c) => err.collection === null || c.collection.name === err.collection) ?? creates[0]!;
        const refusal = await caller.authorize(first.collection.name, async () => false).then(() => err, (e: unknown) => e);
        const answer = asBatchError(refusal, first.index);
        placed.add(answer as object);
        throw answer;
      }
      for (const w of written) {
        jobs.push(w.jobs);
        results.push({ status: 201, record: w.record });
      }
      creates = [];
    };
    for (const [i, op] of operations.entries()) {
      const collection = collections[i]!;
      try {
        checkShape(op);
        if (op.method !== 'DELETE') checkData(collection, op.data!, op.method === 'PATCH', ctx.database.caps.query.indexedTextMaxBytes);
        if (op.method === 'POST') {
          creates.push({ collection, data: op.data!, index: i });
          continue;
        }
        await writeCreates();
        if (op.method === 'DELETE') {
          jobs.push(await removeInTransaction(trx, outbox, collection, { id: op.id!, ifMatch: op.ifMatch ?? null }, now));
          results.push({ status: 204 });
        } else {
          const written = await patchInTransaction(trx, outbox, collection, { id: op.id!, data: op.data!, ifMatch: op.ifMatch ?? null }, now);
          jobs.push(written.jobs);
          results.push({ status: 200, record: written.record });
        }
        if ((sizes.get(`${op.collection}\0${op.id}`) ?? 0) >= YIELD_AFTER_BYTES) await nextTurn();
      } catch (err) {
        throw placed.has(err as object) ? err : asBatchError(err, i);
      }
    }
    await writeCreates();
    return { status: 200, value: results, jobs };
  });
}
