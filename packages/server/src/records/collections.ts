import type { Kysely } from 'kysely';
import type { Context } from '../context.js';
import type { Tables } from '../db/tables.js';
import { AppError, type FieldError } from '../errors.js';
import { iso } from '../lib/clock.js';
import { TEST_RECORD_ID } from '../lib/ids.js';
import type { Pace } from '../lib/turns.js';
import { createOutbox } from '../webhooks/outbox.js';
import { deleteCollection, deleteCollectionCounting, findCollection, insertCollection, listCollections, updateCollectionFields, type Collection } from './collections-store.js';
import { COLLECTION_NAME, validateFieldList, type Field } from './fields.js';
import { buildFieldIndex, dropFieldIndex, dropLeftoverIndex } from './query/field-index-store.js';
import { RequiredCheck } from './required-check.js';

/** Builds the indexes of newly indexed fields; if one fails, those already built are dropped again. */
async function buildIndexes(ctx: Context, name: string, fields: readonly Field[]): Promise<void> {
  const built: Field[] = [];
  try {
    for (const f of fields) {
      // It reads every record of the collection: off SQLite's event loop (Database.heavy).
      await ctx.database.heavy({ collection: name, reads: 'table' }, false, (db) => buildFieldIndex(db, ctx.database.caps.query, name, f));
      built.push(f);
    }
  } catch (err) {
    for (const f of built) await dropFieldIndex(ctx.database.db, ctx.database.caps.query, name, f.name).catch(() => {});
    throw err;
  }
}

async function dropIndexes(ctx: Context, name: string, fields: readonly Field[]): Promise<void> {
  for (const f of fields) await dropFieldIndex(ctx.database.db, ctx.database.caps.query, name, f.name);
}

/** Drops what a killed process may have left of the indexes of fields that are not indexed (dropLeftoverIndex). */
async function dropLeftovers(ctx: Context, name: string, fields: readonly Field[]): Promise<void> {
  for (const f of fields) if (!f.indexed) await dropLeftoverIndex(ctx.database.db, ctx.database.caps.query, name, f.name);
}

/**
 * Runs a change of the collection's schema under its lock (Database.schemaChange), so that what the change builds,
 * commits and drops is not another change's. A change already under way makes this one `conflict` at once rather than
 * wait: it may be building an index for minutes, and once it commits, a PATCH read before would be refused anyway.
 */
async function changingSchema<T>(ctx: Context, name: string, change: () => Promise<T>): Promise<T> {
  const release = await ctx.database.schemaChange(name);
  if (!release) throw new AppError('conflict', `Another change of collection "${name}" is under way; read it again and retry.`);
  try {
    return await change();
  } finally {
    await release();
  }
}

export async function requireCollection(ctx: Context, name: string): Promise<Collection> {
  const c = await findCollection(ctx.database.db, name);
  if (!c) throw new AppError('not_found', `No collection named "${name}".`);
  return c;
}

/**
 * Every collection, by name, a page at a time: for the schema endpoint and the admin OpenAPI document, which show them
 * all, and make each collection's part of their answer as it comes (JsonBytes) rather than hold them all. Other work
 * runs between pages (Pace): on SQLite a statement runs on the event loop, and 2,000 collections of 50 fields took
 * 260–350 ms to read and parse.
 */
export async function* collectionPages(ctx: Context, pace: Pace): AsyncGenerator<Collection[]> {
  for (let after: string | null = null; ; ) {
    const page = await listCollections(ctx.database.db, after, COLLECTIONS_PAGE);
    yield page;
    if (page.length < COLLECTIONS_PAGE) return;
    after = page.at(-1)!.name;
    await pace.slice();
  }
}

/** A page of collectionPages: 95 KB of field lists at 50 fields a collection (about 3 ms to read and parse), 500 KB at most. */
const COLLECTIONS_PAGE = 20;

export async function createCollection(ctx: Context, name: string, fields: Field[]): Promise<Collection> {
  const errors: FieldError[] = [];
  if (!COLLECTION_NAME.test(name)) errors.push({ path: '/name', message: 'must match ^[a-z][a-z0-9_]{0,62}$' });
  errors.push(...validateFieldList(fields, '/fields'));
  if (errors.length > 0) throw new AppError('validation_failed', 'The collection definition is invalid.', { errors });
  const now = ctx.clock.now();
  const collection: Collection = {
    name,
    fields: fields.map((f) => ({ name: f.name, type: f.type, required: f.required, indexed: f.indexed === true })),
    createdAt: now,
    updatedAt: now,
  };
  return changingSchema(ctx, name, () => insertWithIndexes(ctx, collection));
}

async function insertWithIndexes(ctx: Context, collection: Collection): Promise<Collection> {
  const { name } = collection;
  try {
    await insertCollection(ctx.database.db, collection);
  } catch (err) {
    if (ctx.database.caps.isUniqueViolation(err)) throw new AppError('conflict', `A collection named "${name}" exists.`);
    throw err;
  }
  // The answer comes once the indexes are usable; an index that cannot be built takes the new collection with it.
  // Indexes left by an earlier collection of this name (a process killed before it dropped them) go first.
  try {
    await dropLeftovers(ctx, name, collection.fields);
    await buildIndexes(ctx, name, collection.fields.filter((f) => f.indexed));
  } catch (err) {
    await deleteCollection(ctx.database.db, name);
    throw err;
  }
  return collection;
}

/**
 * PATCH: the given list is the new field list. Fields may be added and `required` may change; removing a
 * field or changing its type is refused, since stored records would silently stop matching their schema.
 */
export async function patchCollection(ctx: Context, name: string, fields: Field[]): Promise<Collection> {
  const current = await requireCollection(ctx, name);
  const errors: FieldError[] = [];
  const incoming = new Map(fields.map((f) => [f.name, f]));
  current.fields.forEach((f) => {
    const next = incoming.get(f.name);
    if (!next) errors.push({ path: '/fields', message: `field "${f.name}" cannot be removed` });
    else if (next.type !== f.type) {
      errors.push({ path: `/fields/${fields.indexOf(next)}/type`, message: `the type of "${f.name}" cannot change` });
    }
  });
  errors.push(...validateFieldList(fields, '/fields', current.fields));
  if (errors.length > 0) throw new AppError('validation_failed', 'The field change is not allowed.', { errors });
  const ordered: Field[] = [
    ...current.fields.map((f) => ({ ...f, required: incoming.get(f.name)!.required, indexed: incoming.get(f.name)!.indexed === true })),
    ...fields
      .filter((f) => !current.fields.some((x) => x.name === f.name))
      .map((f) => ({ name: f.name, type: f.type, required: f.required, indexed: f.indexed === true })),
  ];
  return changingSchema(ctx, name, async () => {
    // Read again under the lock: a change committed since `current` was read would be undone by this list.
    if ((await requireCollection(ctx, name)).updatedAt !== current.updatedAt) throw changedMeanwhile();
    return applyFields(ctx, current, ordered);
  });
}

const changedMeanwhile = () => new AppError('conflict', 'The collection changed meanwhile; read it again and retry.');

/** The rest of a PATCH, under the collection's lock: builds, checks, commits `ordered` over `current`, drops. */
async function applyFields(ctx: Context, current: Collection, ordered: Field[]): Promise<Collection> {
  const { name } = current;
  const wasIndexed = new Set(current.fields.filter((f) => f.indexed).map((f) => f.name));
  const newlyIndexed = ordered.filter((f) => f.indexed && !wasIndexed.has(f.name));
  const unindexed = current.fields.filter((f) => f.indexed && !ordered.find((x) => x.name === f.name)!.indexed);
  // New indexes are usable before the schema says so (and before the answer); dropped ones go after. Built before the
  // required check, so that a field made indexed and required at once is checked through its index. A new field may
  // find a leftover index of its name (dropLeftovers); it goes before the schema lets any record hold the field.
  await dropLeftovers(ctx, name, ordered.filter((f) => !current.fields.some((x) => x.name === f.name)));
  await buildIndexes(ctx, name, newlyIndexed);
  const nowRequired = ordered.filter((f) => f.required && !current.fields.find((x) => x.name === f.name)?.required);
  const required = nowRequired.length === 0 ? null : new RequiredCheck(ctx, name, nowRequired);
  const now = Math.max(ctx.clock.now(), current.updatedAt + 1);
  let updated: boolean;
  try {
    await required?.beforeWrite();
    updated = await ctx.database.write(async (trx) => {
      await required?.inWrite(trx);
      return updateCollectionFields(trx, name, ordered, current.updatedAt, now);
    });
  } catch (err) {
    // Refused: the indexes built for this change go. After any other failure (a lost connection at the commit, say)
    // the change may have been made, and with it the schema that names them: they stay.
    if (err instanceof AppError) await dropIndexes(ctx, name, newlyIndexed).catch(() => {});
    throw err;
  }
  // Under the collection's lock no other change commits; the guard still fences one whose lock went with its broken
  // connection (PostgreSQL).
  if (!updated) {
    await dropIndexes(ctx, name, newlyIndexed).catch(() => {});
    throw changedMeanwhile();
  }
  await dropIndexes(ctx, name, unindexed);
  return { ...current, fields: ordered, updatedAt: now };
}

/**
 * Deletes a collection, with its records when `force` (else a collection holding any is `conflict`), and commits a
 * `collection.deleted` event in the same transaction (SPEC §12): the feed shows it to whoever may read the
 * collection, and targets subscribed to the topic get a job, narrowed by their `collections` only (filter and
 * changedFields are about records). Its jobs wait `pending` for any worker, which is woken after the commit.
 */
export async function removeCollection(ctx: Context, name: string, force: boolean): Promise<void> {
  await changingSchema(ctx, name, () => deleteWithIndexes(ctx, name, force));
}

async function deleteWithIndexes(ctx: Context, name: string, force: boolean): Promise<void> {
  const current = await requireCollection(ctx, name);
  const outbox = createOutbox(ctx.database, ctx.logger, null);
  // With force it deletes every record of the collection: off SQLite's event loop (Database.heavy). Without, a refusal
  // or the delete of an empty collection, it reads one row.
  const writing = <T>(work: (trx: Kysely<Tables>) => Promise<T>) => (force ? ctx.database.heavy({ collection: name, reads: 'collection' }, true, work) : ctx.database.write(work));
  const jobs = await writing(async (trx) => {
    const now = ctx.clock.now();
    // Counted and refused inside the transaction, so a record written meanwhile is never deleted without force.
    const records = await deleteCollectionCounting(trx, ctx.database.caps, name, force);
    if (records === null) throw new AppError('not_found', `No collection named "${name}".`);
    if (records === 'holds-records') throw new AppError('conflict', `"${name}" still holds records; delete with ?force=true to remove them too.`);
    const payload = { collection: { name }, records, occurredAt: iso(now) };
    return outbox.enqueue(trx, { topic: 'collection.deleted', collection: name, recordId: TEST_RECORD_ID, payload }, now);
  });
  void outbox.committed(jobs);
  await dropIndexes(ctx, name, current.fields.filter((f) => f.indexed));
  await dropLeftovers(ctx, name, current.fields);
}
