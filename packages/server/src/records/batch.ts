import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Enqueued } from '../webhooks/queue/enqueue.js';
import type { Outbox } from '../webhooks/outbox.js';
import { checkData, createManyInTransaction, patchInTransaction, removeInTransaction, writeOnce, type Replayable } from './changes.js';
import { findCollection, type Collection } from './collections-store.js';
import type { RecordJson } from './record-json.js';

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
  // Hashed only under a key: the hash is of the whole body, and most batches carry none.
  const idempotency = idempotencyKey === undefined ? undefined : { tokenId: caller.tokenId, key: idempotencyKey, requestHash: sha256Hex(`batch\0${JSON.stringify(operations)}`) };
  return writeOnce<BatchResult[]>(ctx, outbox, idempotency, async (trx, now, outbox) => {
    const results: BatchResult[] = [];
    const jobs: Array<Enqueued | null> = [];
    // Consecutive creates are written together, before the next operation that reads what came before it (a PATCH
    // or DELETE) and at the end. A create cannot fail once its data checks, so the first failing operation is still
    // the one reported, with every operation before it done.
    let creates: Array<{ collection: Collection; data: Record<string, unknown> }> = [];
    const writeCreates = async () => {
      if (creates.length === 0) return;
      for (const written of await createManyInTransaction(trx, outbox, creates, now)) {
        jobs.push(written.jobs);
        results.push({ status: 201, record: written.record });
      }
      creates = [];
    };
    for (const [i, op] of operations.entries()) {
      const collection = collections[i]!;
      try {
        checkShape(op);
        if (op.method !== 'DELETE') checkData(collection, op.data!, op.method === 'PATCH');
        if (op.method === 'POST') {
          creates.push({ collection, data: op.data! });
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
      } catch (err) {
        throw asBatchError(err, i);
      }
    }
    await writeCreates();
    return { status: 200, value: results, jobs };
  });
}
