import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { iso } from '../lib/clock.js';
import { randomToken } from '../lib/crypto.js';
import { newId, TEST_RECORD_ID } from '../lib/ids.js';
import { checkDestination, DestinationError, offlineDestinationProblem, webhookUrlProblem } from './destination-guard.js';
import type { SecretBox } from '../lib/crypto.js';
import type { Outbox } from './outbox.js';
import { deleteTarget, findTarget, insertTarget, updateTarget, type Subscription, type TargetRow } from './targets-store.js';
import { killTargetJobs } from './queue/kill-target-jobs.js';
import { markOrdered, releaseHeld } from './queue/release-held.js';
import type { Topic } from './topics.js';

export const SECRET_PREFIX = 'whsec_';
export const TEST_COLLECTION = '_test';

const newSecret = (): string => `${SECRET_PREFIX}${randomToken(32)}`;

/**
 * Save-time destination rules. The URL's shape is always checked, and so is an address written literally in it
 * (in whatever form WHATWG normalises to one: `0x7f.1`, `2130706433`, `[::ffff:127.0.0.1]`), and a refused name or
 * URL text that no allowed address could excuse (SPEC §12). Only the DNS look-up is skipped for a disabled target:
 * a name may not resolve yet, and it is checked when the target is enabled.
 */
async function checkUrl(ctx: Context, url: string, enabled: boolean): Promise<void> {
  const problem = webhookUrlProblem(url);
  if (problem) throw new AppError('validation_failed', 'The webhook URL is not acceptable.', { errors: [{ path: '/url', message: problem }] });
  const refused = (message: string) =>
    new AppError('destination_refused', `Deliveries to this URL would be refused: ${message}`, { errors: [{ path: '/url', message }] });
  if (!enabled) {
    const reason = offlineDestinationProblem(url, ctx.config.webhookAllowCidrs);
    if (reason !== null) throw refused(reason);
    return;
  }
  try {
    await checkDestination(url, { resolver: ctx.resolver, allow: ctx.config.webhookAllowCidrs });
  } catch (err) {
    if (err instanceof DestinationError) throw refused((err as Error).message);
    throw err;
  }
}

export interface TargetInput extends Partial<Subscription> {
  name: string;
  url: string;
  topics: Topic[];
  enabled?: boolean;
}

/**
 * Checks a filter against the fields of each named collection (the records layer's checker: webhooks cannot know
 * fields); throws `validation_failed` at `/filter`.
 */
export type FilterCheck = (collections: readonly string[], filter: string) => Promise<void>;

/** A filter narrows record events of named collections: it is checked against their fields, so it needs them. */
async function checkSubscription(sub: Pick<Subscription, 'collections' | 'filter'>, checkFilter: FilterCheck): Promise<void> {
  if (sub.filter === null) return;
  if (sub.collections === null) {
    throw new AppError('validation_failed', 'A filter needs collections to check against.', {
      errors: [{ path: '/filter', message: 'requires collections to be set' }],
    });
  }
  await checkFilter(sub.collections, sub.filter);
}

const unique = <T>(list: readonly T[] | null | undefined): T[] | null | undefined => (list ? [...new Set(list)] : list);

export async function createTarget(ctx: Context, input: TargetInput, checkFilter: FilterCheck): Promise<TargetRow & { secret: string }> {
  const enabled = input.enabled ?? true;
  const subscription: Subscription = {
    collections: unique(input.collections) ?? null,
    filter: input.filter ?? null,
    changedFields: unique(input.changedFields) ?? null,
    ordering: input.ordering ?? 'none',
  };
  await checkSubscription(subscription, checkFilter);
  await checkUrl(ctx, input.url, enabled);
  const now = ctx.clock.now();
  const id = newId('wh', now);
  const secret = newSecret();
  const row: TargetRow = {
    id,
    name: input.name,
    url: input.url,
    topics: [...new Set(input.topics)],
    enabled,
    disabledReason: enabled ? null : 'manual',
    disabledAt: enabled ? null : now,
    secretSealed: ctx.box.seal(secret, id),
    previousSecretSealed: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
    ...subscription,
    signatureScheme: 'svc',
    signatureAlgorithm: 'hmac-sha256',
    publicKey: null,
    headersSealed: null,
    headersShown: null,
    ratePerSecond: null,
  };
  await insertTarget(ctx.database.db, row);
  return { ...row, secret };
}

export async function requireTarget(ctx: Context, id: string): Promise<TargetRow> {
  const t = await findTarget(ctx.database.db, id);
  if (!t) throw new AppError('not_found', 'No such webhook target.');
  return t;
}

export async function patchTarget(ctx: Context, id: string, patch: Partial<TargetInput>, checkFilter: FilterCheck): Promise<TargetRow> {
  const current = await requireTarget(ctx, id);
  const url = patch.url ?? current.url;
  const enabled = patch.enabled ?? current.enabled;
  const subscription: Partial<Subscription> = {
    collections: unique(patch.collections),
    filter: patch.filter,
    changedFields: unique(patch.changedFields),
    ordering: patch.ordering,
  };
  const next: Subscription = {
    collections: subscription.collections === undefined ? current.collections : subscription.collections,
    filter: subscription.filter === undefined ? current.filter : subscription.filter,
    changedFields: subscription.changedFields === undefined ? current.changedFields : subscription.changedFields,
    ordering: subscription.ordering ?? current.ordering,
  };
  await checkSubscription(next, checkFilter);
  // Re-check when the URL changes or the target is switched on: both can make a live destination private.
  if (patch.url !== undefined || (enabled && !current.enabled)) await checkUrl(ctx, url, enabled);
  const topics = patch.topics ? [...new Set(patch.topics)] : undefined;
  const now = Math.max(ctx.clock.now(), current.updatedAt);
  await ctx.database.db.transaction().execute(async (trx) => {
    await updateTarget(trx, id, { name: patch.name, url: patch.url, topics, enabled: patch.enabled, ...subscription }, now);
    // Ordering switched off: nothing waits for an older job any more.
    if (current.ordering === 'record' && next.ordering === 'none') await releaseHeld(trx, { now, webhookId: id });
    // Switched on: what is already queued holds its record's place for the writes to come.
    if (current.ordering === 'none' && next.ordering === 'record') await markOrdered(trx, id);
  });
  // Workers re-read targets on a wake-up: a new URL, topics or state applies to the next claim.
  await ctx.database.signal.notify().catch(() => {});
  // Read back: the disabled reason and time are the database's (a target svc disabled keeps its reason).
  return requireTarget(ctx, id);
}

/** The target goes (soft: see deleteTarget), and in the same transaction its unfinished jobs end dead with `target_deleted`. */
export async function removeTarget(ctx: Context, id: string): Promise<void> {
  await ctx.database.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    if (!(await deleteTarget(trx, id, now))) throw new AppError('not_found', 'No such webhook target.');
    await killTargetJobs(trx, { now, webhookId: id });
  });
}

export async function rotateSecret(ctx: Context, id: string, overlapSeconds: number): Promise<TargetRow & { secret: string }> {
  const current = await requireTarget(ctx, id);
  const secret = newSecret();
  const now = ctx.clock.now();
  const patch = {
    secretSealed: ctx.box.seal(secret, id),
    previousSecretSealed: overlapSeconds > 0 ? current.secretSealed : null,
    previousSecretExpiresAt: overlapSeconds > 0 ? now + overlapSeconds * 1000 : null,
  };
  await updateTarget(ctx.database.db, id, patch, now);
  await ctx.database.signal.notify().catch(() => {});
  return { ...current, ...patch, updatedAt: now, secret };
}

/** The secrets that sign now, newest first: the current one, and the previous one during its overlap. */
export function signingSecrets(box: SecretBox, t: Pick<TargetRow, 'id' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>, now: number): string[] {
  const secrets = [box.open(t.secretSealed, t.id)];
  if (t.previousSecretSealed && t.previousSecretExpiresAt !== null && now < t.previousSecretExpiresAt) {
    secrets.push(box.open(t.previousSecretSealed, t.id));
  }
  return secrets;
}

/** A `webhook.test` job for this target alone, delivered like any other. */
export async function sendTest(ctx: Context, outbox: Outbox, id: string): Promise<string> {
  await requireTarget(ctx, id);
  const now = ctx.clock.now();
  const event = { topic: 'webhook.test' as const, collection: TEST_COLLECTION, recordId: TEST_RECORD_ID, payload: { test: true, occurredAt: iso(now) } };
  const enqueued = await ctx.database.db.transaction().execute((trx) => outbox.enqueue(trx, event, now, id));
  await outbox.committed(enqueued);
  return enqueued.jobIds[0]!;
}
