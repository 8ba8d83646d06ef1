import { randomBytes } from 'node:crypto';

/**
 * Identifiers are `<prefix>_` + 26 Crockford base32 characters: 10 of millisecond time, 16 of
 * randomness (ULID layout). They sort by creation time, which lets every list page by id alone.
 * Within one millisecond the random part is incremented, so ids from one process stay ordered.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export type IdPrefix = 'rec' | 'del' | 'wh' | 'tok' | 'adm' | 'evt' | 'adt';

/**
 * An id of one kind (its prefix): a plain string at run time, told apart by the compiler, so a webhook's id cannot be
 * passed where a delivery's is wanted. Made by newId, or taken from where the database or a checked request says
 * which kind it is (`as DeliveryId`, at those edges only).
 */
export type Id<P extends IdPrefix> = string & { readonly __idKind: P };
export type DeliveryId = Id<'del'>;
export type WebhookId = Id<'wh'>;
export type EventId = Id<'evt'>;
export type RecordId = Id<'rec'>;

export const ID_PATTERN = /^[a-z]{2,3}_[0-9A-HJKMNP-TV-Z]{26}$/;

export const idPattern = (prefix: IdPrefix): RegExp => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);

const patterns = new Map<IdPrefix, RegExp>();
/**
 * `value` as an id of its kind, where a request named it (the route's schema has checked its pattern already; this
 * checks again, so a route without that check fails loudly instead of passing a wrong kind of id on).
 */
export function asId<P extends IdPrefix>(prefix: P, value: string): Id<P> {
  let pattern = patterns.get(prefix);
  if (!pattern) patterns.set(prefix, (pattern = idPattern(prefix)));
  if (!pattern.test(value)) throw new Error(`not a ${prefix} id: ${JSON.stringify(value.slice(0, 40))}`);
  return value as Id<P>;
}

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function freshRandom(): number[] {
  const bytes = randomBytes(16);
  return Array.from(bytes, (b) => b % 32);
}

function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]! += 1;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom(); // overflow in one millisecond: practically never
}

export function newId<P extends IdPrefix>(prefix: P, nowMs: number): Id<P> {
  if (nowMs <= lastTime) {
    lastRandom = increment(lastRandom);
  } else {
    lastTime = nowMs;
    lastRandom = freshRandom();
  }
  return `${prefix}_${encodeTime(lastTime)}${lastRandom.map((d) => ALPHABET[d]).join('')}` as Id<P>;
}

/** The millisecond an id was made at (its first 10 characters after the prefix). */
export function idTime(id: string): number {
  const start = id.indexOf('_') + 1;
  let ms = 0;
  for (const c of id.slice(start, start + 10)) ms = ms * 32 + ALPHABET.indexOf(c);
  return ms;
}

/**
 * A new id that sorts after `previous`, which may come from another process: made now or, when `previous` was made
 * in this millisecond or later (the same millisecond elsewhere, a clock ahead of ours), one millisecond after it.
 * Within one millisecond only one process's ids are ordered, by the random part's increment.
 */
export function newIdAfter<P extends IdPrefix>(prefix: P, previous: string, nowMs: number): Id<P> {
  return newId(prefix, Math.max(nowMs, idTime(previous) + 1));
}

/** Sorts before every id of `prefix` made at or after `nowMs`, and after every one made before it. */
export const idFloor = (prefix: IdPrefix, nowMs: number): string => `${prefix}_${encodeTime(Math.max(0, Math.floor(nowMs)))}`;

/** The reserved record id of `webhook.test` envelopes. */
export const TEST_RECORD_ID = 'rec_00000000000000000000000000';

/** The reserved collection of operational events' envelopes (`webhook.disabled`, `delivery.dead`; SPEC §10). */
export const OPERATIONAL_COLLECTION = '_svc';
/**
 * The smallest id of this prefix that `newId` could give at `ms` or later. An id's time is never earlier than the
 * `nowMs` it was made with (it is later when the clock stepped back), so `id >= idFloorAt(prefix, from)` holds for
 * every row created at `from` or later: a lower bound only, never an upper one.
 */
export function idFloorAt(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encodeTime(Math.max(0, Math.floor(ms)))}${'0'.repeat(16)}`;
}
