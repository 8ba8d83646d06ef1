import { createHash } from 'node:crypto';
import { AppError } from '../../errors.js';
import { safeEqual } from '../../lib/crypto.js';
import { CURSOR_MAX_CHARS } from '../../lib/cursor.js';
import type { SortKey } from './sort.js';

/**
 * Keyset cursors of filtered and sorted lists (SPEC §8), bounded (SPEC §12: at most 1,024 characters whatever the sort
 * values). A text sort value whose JSON takes more than PREFIX_MAX_BYTES is carried as a prefix, with a digest of the
 * row's full sort values; the server reads that row's values again when the cursor comes back (list-request.ts). See
 * docs/queries.md "Bounded cursors" for what holds when that row changed meanwhile.
 */

export type SortValue = string | number | boolean | null;

export interface Keyset {
  /** The last row's sort values, one per sort key (null: the row had none); a cut key's value is its prefix. */
  values: SortValue[];
  id: string;
  /** The keys whose text was cut to a prefix (ascending), and the digest of the row's full sort values. */
  cut?: { keys: number[]; digest: string };
}

/**
 * What a keyset cursor is bound to: its query's fingerprint, and the server's keyed MAC (a key derived from
 * SVC_SECRET_KEY, the same in every process), so a cursor whose position or query was altered is refused (SPEC §4:
 * opaque, a forged one is `invalid_query`) instead of paging from wherever it says.
 */
export interface KeysetBinding {
  fingerprint: string;
  mac: (text: string) => string;
}

/**
 * The JSON of one value a cursor carries whole, in UTF-8 bytes. Three of them, the id, the MAC, the digest and the
 * members' names take at most 700 bytes, 932 characters of base64url: under CURSOR_MAX_CHARS.
 */
const PREFIX_MAX_BYTES = 192;

/** 128 bits of SHA-256 of the full sort values: recognises the row's values when it comes back, not a secret. */
export const sortValuesDigest = (values: readonly SortValue[]): string => createHash('sha256').update(JSON.stringify(values)).digest('base64url').slice(0, 22);

/** The longest prefix of `text`, in whole code points, whose JSON takes at most PREFIX_MAX_BYTES. */
function prefixOf(text: string): string {
  let bytes = 2;
  let end = 0;
  for (const c of text) {
    const n = Buffer.byteLength(JSON.stringify(c)) - 2;
    if (bytes + n > PREFIX_MAX_BYTES) break;
    bytes += n;
    end += c.length;
  }
  return text.slice(0, end);
}

const keysetMac = (k: Keyset, binding: KeysetBinding): string =>
  binding.mac(`${binding.fingerprint}\u0000${JSON.stringify(k.cut ? [k.id, k.values, k.cut.keys, k.cut.digest] : [k.id, k.values])}`);

/**
 * base64url of JSON {after, v, q} (the last row's id, its sort values, and the MAC of both with the query), plus
 * {cut, d} when long texts were cut. At most CURSOR_MAX_CHARS characters.
 */
export function encodeKeyset(row: { id: string; values: readonly SortValue[] }, keys: readonly SortKey[], binding: KeysetBinding): string {
  const cutKeys = keys.flatMap((k, i) => {
    const v = row.values[i];
    return k.target.kind === 'data' && typeof v === 'string' && Buffer.byteLength(JSON.stringify(v)) > PREFIX_MAX_BYTES ? [i] : [];
  });
  const keyset: Keyset =
    cutKeys.length === 0
      ? { id: row.id, values: [...row.values] }
      : { id: row.id, values: row.values.map((v, i) => (cutKeys.includes(i) ? prefixOf(v as string) : v)), cut: { keys: cutKeys, digest: sortValuesDigest(row.values) } };
  const body: Record<string, unknown> = { after: keyset.id, v: keyset.values, q: keysetMac(keyset, binding) };
  if (keyset.cut) Object.assign(body, { cut: keyset.cut.keys, d: keyset.cut.digest });
  const cursor = Buffer.from(JSON.stringify(body)).toString('base64url');
  if (cursor.length > CURSOR_MAX_CHARS) throw new Error(`a keyset cursor of ${cursor.length} characters`);
  return cursor;
}

const VALUE_SHAPE: Record<string, (v: unknown) => boolean> = {
  text: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
  datetime: (v) => typeof v === 'string' && /^\d{1,15}\.\d{9}$/.test(v),
};

/** The `cut` member: distinct ascending key positions, each a text field's, or null when it is not that. */
function cutKeysOf(raw: unknown, keys: readonly SortKey[], values: readonly unknown[]): number[] | null {
  if (!Array.isArray(raw) || raw.length === 0) return null;
  const ok = raw.every((i, n) => {
    const k = keys[i as number];
    return Number.isInteger(i) && (n === 0 || i > raw[n - 1]) && k?.target.kind === 'data' && k.target.type === 'text' && typeof values[i as number] === 'string';
  });
  return ok ? (raw as number[]) : null;
}

/**
 * A cursor this service issued for this query, checked value by value against the sort keys and by its MAC; anything
 * else is `invalid_query`. Cursors issued before cursors were bounded (longer, never cut) are still taken.
 */
export function decodeKeyset(raw: string, keys: readonly SortKey[], binding: KeysetBinding, idShape: RegExp): Keyset {
  const refuse = () => new AppError('invalid_query', 'The cursor is not one this service issued for this filter and sort.', { errors: [{ path: 'cursor', message: 'unknown cursor' }] });
  let parsed: { after?: unknown; v?: unknown; q?: unknown; cut?: unknown; d?: unknown };
  try {
    if (!/^[A-Za-z0-9_-]{1,16384}$/.test(raw)) throw refuse();
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as typeof parsed;
  } catch {
    throw refuse();
  }
  if (parsed === null || typeof parsed !== 'object' || typeof parsed.q !== 'string') throw refuse();
  const members = Object.keys(parsed).length;
  if (members !== 3 && !(members === 5 && 'cut' in parsed && typeof parsed.d === 'string' && /^[A-Za-z0-9_-]{22}$/.test(parsed.d))) throw refuse();
  if (typeof parsed.after !== 'string' || !idShape.test(parsed.after)) throw refuse();
  const values = parsed.v;
  if (!Array.isArray(values) || values.length !== keys.length) throw refuse();
  keys.forEach((k, i) => {
    const v: unknown = values[i];
    const type = k.target.kind === 'data' ? k.target.type : k.target.kind === 'id' ? 'text' : 'integer';
    if (v === null ? k.target.kind !== 'data' : !VALUE_SHAPE[type]!(v)) throw refuse();
  });
  const keyset: Keyset = { id: parsed.after, values: values as SortValue[] };
  if (members === 5) {
    const cutKeys = cutKeysOf(parsed.cut, keys, values);
    if (cutKeys === null) throw refuse();
    keyset.cut = { keys: cutKeys, digest: parsed.d as string };
  }
  if (!safeEqual(parsed.q, keysetMac(keyset, binding))) throw refuse();
  return keyset;
}

/**
 * The least text greater than every text that starts with `prefix` (its last code point below U+10FFFF raised by
 * one, what follows it dropped), or null when there is none (a prefix of U+10FFFF alone).
 */
export function textAfterPrefix(prefix: string): string | null {
  const points = Array.from(prefix, (c) => c.codePointAt(0)!);
  for (let i = points.length - 1; i >= 0; i--) {
    if (points[i]! >= 0x10ffff) continue;
    const next = points[i]! + 1 === 0xd800 ? 0xe000 : points[i]! + 1;
    return String.fromCodePoint(...points.slice(0, i), next);
  }
  return null;
}
