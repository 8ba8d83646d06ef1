import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { iso } from '../lib/clock.js';
import { randomBytes } from 'node:crypto';
import { newId, TEST_RECORD_ID, type WebhookId } from '../lib/ids.js';
import { checkDestination, DestinationError, offlineDestinationProblem, refusalAdvice, webhookUrlProblem } from './destination-guard.js';
import type { SecretBox } from '../lib/crypto.js';
import type { Outbox } from './outbox.js';
import { hmacKey, isStandardSecret, newKeyPair, openPrivateKey, SECRET_PREFIX, type SigningKeys } from './signing.js';
import { checkStaticHeaders, sealStaticHeaders } from './static-headers.js';
import { checkHeadersFor, resolveDestination, type DestinationInput } from './target-destination.js';
import { deleteTarget, findTarget, insertTarget, updateTarget, type ReceiverSettings, type SignatureAlgorithm, type SignatureScheme, type Subscription, type TargetRow } from './targets-store.js';
import { killTargetJobs } from './queue/kill-target-jobs.js';
import { markOrdered, releaseHeld } from './queue/release-held.js';
import type { Topic } from './topics.js';

export { SECRET_PREFIX };
export const TEST_COLLECTION = '_test';

/** `whsec_` and the standard base64, padded, of 32 random bytes: what every Standard Webhooks library decodes. */
export const newSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/**
 * Save-time destination rules. The URL's shape is always checked, and so is an address written literally in it
 * (in whatever form WHATWG normalises to one: `0x7f.1`, `2130706433`, `[::ffff:127.0.0.1]`), and a refused name or
 * URL text that no allowed address could excuse (SPEC §12). Only the DNS look-up is skipped for a disabled target:
 * a name may not resolve yet, and it is checked when the target is enabled.
 */
async function checkUrl(ctx: Context, url: string, enabled: boolean): Promise<void> {
  const problem = webhookUrlProblem(url);
  if (problem) throw new AppError('validation_failed', 'The webhook URL is not acceptable.', { errors: [{ path: '/url', message: problem }] });
  // The detail says what to do about it, naming the allow list in force; a name that does not resolve is not
  // something the allow list can excuse, so it gets none of that advice.
  const refused = (message: string, advice: boolean) =>
    new AppError('destination_refused', `Deliveries to this URL would be refused: ${message}.${advice ? ` ${refusalAdvice(ctx.config.webhookAllowCidrs)}` : ''}`, {
      errors: [{ path: '/url', message }],
    });
  if (!enabled) {
    const reason = offlineDestinationProblem(url, ctx.config.webhookAllowCidrs);
    if (reason !== null) throw refused(reason, true);
    return;
  }
  try {
    await checkDestination(url, { resolver: ctx.resolver, allow: ctx.config.webhookAllowCidrs });
  } catch (err) {
    if (err instanceof DestinationError) throw refused(err.message, err.code === 'destination_refused');
    throw err;
  }
}

/** What a receiver asks of its deliveries (SPEC §13), as the API takes it. */
export interface ReceiverInput {
  signatureScheme?: SignatureScheme;
  signatureAlgorithm?: SignatureAlgorithm;
  headers?: Record<string, string> | null;
  rateLimit?: { perSecond: number } | null;
}

/** `url` for an https target; a broker target names its broker and the place in it instead (SPEC §14). */
export interface TargetInput extends Partial<Subscription>, ReceiverInput, DestinationInput {
  name: string;
  topics: Topic[];
  enabled?: boolean;
}

/** Signing material made for a target: a secret, or an ed25519 key pair. What is shown is shown once (but a public key). */
interface Material {
  sealed: string;
  publicKey: string | null;
  secret: string | null;
}

function newMaterial(ctx: Context, id: string, algorithm: SignatureAlgorithm): Material {
  if (algorithm === 'ed25519') {
    const pair = newKeyPair();
    return { sealed: ctx.box.seal(pair.privateKey, id), publicKey: pair.publicKey, secret: null };
  }
  const secret = newSecret();
  return { sealed: ctx.box.seal(secret, id), publicKey: null, secret };
}

/** ed25519 signs the Standard Webhooks scheme only (svc's own headers are HMAC by definition). */
function checkAlgorithm(scheme: SignatureScheme, algorithm: SignatureAlgorithm): void {
  if (algorithm === 'ed25519' && scheme !== 'standard') {
    throw new AppError('validation_failed', 'ed25519 signs the standard scheme only.', {
      errors: [{ path: '/signatureAlgorithm', message: 'ed25519 requires signatureScheme "standard"' }],
    });
  }
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

/** A target as made or re-keyed: `secret` (HMAC) or its public key (ed25519) is in this answer, the secret only here. */
export type TargetWithMaterial = TargetRow & { secret: string | null };

export async function createTarget(ctx: Context, input: TargetInput, checkFilter: FilterCheck): Promise<TargetWithMaterial> {
  const enabled = input.enabled ?? true;
  const subscription: Subscription = {
    collections: unique(input.collections) ?? null,
    filter: input.filter ?? null,
    changedFields: unique(input.changedFields) ?? null,
    ordering: input.ordering ?? 'none',
  };
  const signatureScheme = input.signatureScheme ?? 'svc';
  const signatureAlgorithm = input.signatureAlgorithm ?? 'hmac-sha256';
  checkAlgorithm(signatureScheme, signatureAlgorithm);
  const destination = resolveDestination(input, null, ctx.config.brokers);
  const headers = input.headers ? checkStaticHeaders(input.headers) : null;
  checkHeadersFor(destination.type, Object.keys(headers ?? {}));
  await checkSubscription(subscription, checkFilter);
  if (destination.type === 'https') await checkUrl(ctx, destination.url!, enabled);
  const now = ctx.clock.now();
  const id = newId('wh', now);
  const material = newMaterial(ctx, id, signatureAlgorithm);
  const row: TargetRow = {
    id,
    name: input.name,
    ...destination,
    topics: [...new Set(input.topics)],
    enabled,
    disabledReason: enabled ? null : 'manual',
    disabledAt: enabled ? null : now,
    secretSealed: material.sealed,
    previousSecretSealed: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
    ...subscription,
    signatureScheme,
    signatureAlgorithm,
    publicKey: material.publicKey,
    ...sealStaticHeaders(ctx.box, id, headers),
    ratePerSecond: input.rateLimit?.perSecond ?? null,
  };
  await insertTarget(ctx.database.db, row);
  return { ...row, secret: material.secret };
}

export async function requireTarget(ctx: Context, id: string): Promise<TargetRow> {
  const t = await findTarget(ctx.database.db, id);
  if (!t) throw new AppError('not_found', 'No such webhook target.');
  return t;
}

/**
 * The receiver settings a PATCH changes. A new algorithm is new material (a secret, or a key pair) with no overlap:
 * the old kind of signature is of no use to a receiver that verifies the new one, and the answer shows what is new.
 * The standard scheme needs a secret of the standard alphabet: an older one is refused (`conflict`) until rotated.
 */
function receiverPatch(ctx: Context, current: TargetRow, patch: ReceiverInput): { set: Partial<ReceiverSettings & Pick<TargetRow, 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>>; secret: string | null } {
  const scheme = patch.signatureScheme ?? current.signatureScheme;
  const algorithm = patch.signatureAlgorithm ?? current.signatureAlgorithm;
  checkAlgorithm(scheme, algorithm);
  const set: ReturnType<typeof receiverPatch>['set'] = {};
  let secret: string | null = null;
  if (patch.signatureScheme !== undefined) set.signatureScheme = scheme;
  if (algorithm !== current.signatureAlgorithm) {
    const material = newMaterial(ctx, current.id, algorithm);
    Object.assign(set, { signatureAlgorithm: algorithm, secretSealed: material.sealed, publicKey: material.publicKey, previousSecretSealed: null, previousSecretExpiresAt: null });
    secret = material.secret;
  } else if (scheme !== 'svc' && algorithm === 'hmac-sha256' && !isStandardSecret(ctx.box.open(current.secretSealed, current.id))) {
    throw new AppError('conflict', 'This target\'s secret predates Standard Webhooks (it is not standard base64): rotate it first, then choose this scheme.');
  }
  if (patch.headers !== undefined) Object.assign(set, sealStaticHeaders(ctx.box, current.id, patch.headers === null ? null : checkStaticHeaders(patch.headers)));
  if (patch.rateLimit !== undefined) set.ratePerSecond = patch.rateLimit?.perSecond ?? null;
  return { set, secret };
}

export async function patchTarget(ctx: Context, id: string, patch: Partial<TargetInput>, checkFilter: FilterCheck): Promise<TargetWithMaterial> {
  const current = await requireTarget(ctx, id);
  const destination = resolveDestination(patch, current, ctx.config.brokers);
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
  const receiver = receiverPatch(ctx, current, patch);
  checkHeadersFor(destination.type, Object.keys(patch.headers === undefined ? (current.headersShown ?? {}) : (patch.headers ?? {})));
  // Re-check when the URL changes or the target is switched on: both can make a live destination private.
  const urlChanged = destination.type === 'https' && (patch.url !== undefined || current.type !== 'https');
  if (destination.type === 'https' && (urlChanged || (enabled && !current.enabled))) await checkUrl(ctx, destination.url!, enabled);
  const topics = patch.topics ? [...new Set(patch.topics)] : undefined;
  const now = Math.max(ctx.clock.now(), current.updatedAt);
  await ctx.database.db.transaction().execute(async (trx) => {
    await updateTarget(trx, id, { name: patch.name, ...destination, topics, enabled: patch.enabled, ...subscription, ...receiver.set }, now);
    // Ordering switched off: nothing waits for an older job any more.
    if (current.ordering === 'record' && next.ordering === 'none') await releaseHeld(trx, { now, webhookId: current.id });
    // Switched on: what is already queued holds its record's place for the writes to come.
    if (current.ordering === 'none' && next.ordering === 'record') await markOrdered(trx, current.id);
  });
  // Workers re-read targets on a wake-up: a new URL, topics or state applies to the next claim.
  await ctx.database.signal.notify().catch(() => {});
  // Read back: the disabled reason and time are the database's (a target svc disabled keeps its reason).
  return { ...(await requireTarget(ctx, id)), secret: receiver.secret };
}

/** The target goes (soft: see deleteTarget), and in the same transaction its unfinished jobs end dead with `target_deleted`. */
export async function removeTarget(ctx: Context, id: WebhookId): Promise<void> {
  await ctx.database.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    if (!(await deleteTarget(trx, id, now))) throw new AppError('not_found', 'No such webhook target.');
    await killTargetJobs(trx, { now, webhookId: id });
  });
}

/** New material of the target's algorithm; the old one keeps signing beside it for `overlapSeconds`. */
export async function rotateSecret(ctx: Context, id: string, overlapSeconds: number): Promise<TargetWithMaterial> {
  const current = await requireTarget(ctx, id);
  const material = newMaterial(ctx, id, current.signatureAlgorithm);
  const now = ctx.clock.now();
  const patch = {
    secretSealed: material.sealed,
    publicKey: material.publicKey,
    previousSecretSealed: overlapSeconds > 0 ? current.secretSealed : null,
    previousSecretExpiresAt: overlapSeconds > 0 ? now + overlapSeconds * 1000 : null,
  };
  await updateTarget(ctx.database.db, id, patch, now);
  await ctx.database.signal.notify().catch(() => {});
  return { ...current, ...patch, updatedAt: now, secret: material.secret };
}

type SealedMaterial = Pick<TargetRow, 'id' | 'signatureAlgorithm' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>;

/** What signs now, newest first: the current secret or private key, and the previous one during its overlap. */
export function signingKeys(box: SecretBox, t: SealedMaterial, now: number): SigningKeys {
  const sealed = [t.secretSealed];
  if (t.previousSecretSealed && t.previousSecretExpiresAt !== null && now < t.previousSecretExpiresAt) sealed.push(t.previousSecretSealed);
  const opened = sealed.map((s) => box.open(s, t.id));
  return t.signatureAlgorithm === 'ed25519' ? { algorithm: 'ed25519', keys: opened.map(openPrivateKey) } : { algorithm: 'hmac-sha256', keys: opened.map(hmacKey) };
}

/** A `webhook.test` job for this target alone, delivered like any other. */
export async function sendTest(ctx: Context, outbox: Outbox, id: string): Promise<string> {
  await requireTarget(ctx, id);
  const now = ctx.clock.now();
  const event = { topic: 'webhook.test' as const, collection: TEST_COLLECTION, recordId: TEST_RECORD_ID, payload: { test: true, occurredAt: iso(now) } };
  // Traced like a record write (SPEC §15): its delivery's spans hang from the admin request that asked for it.
  const enqueued = await outbox.inWriteSpan((traced) => ctx.database.db.transaction().execute((trx) => traced.enqueue(trx, event, now, id)));
  void outbox.committed(enqueued);
  return enqueued.jobIds[0]!;
}
