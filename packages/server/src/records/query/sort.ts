import { createHash } from 'node:crypto';
import { AppError } from '../../errors.js';
import { safeEqual } from '../../lib/crypto.js';
import type { Field } from '../fields.js';
import type { Target } from './check.js';

export const SORT_MAX_KEYS = 3;

export interface SortKey {
  target: Target;
  desc: boolean;
}

const RESERVED: Record<string, Target> = {
  id: { kind: 'id' },
  version: { kind: 'version' },
  createdAt: { kind: 'time', column: 'createdAt' },
  updatedAt: { kind: 'time', column: 'updatedAt' },
};

const invalid = (parameter: string, message: string): AppError =>
  new AppError('invalid_query', `The ${parameter} parameter is not valid: ${message}.`, { errors: [{ path: parameter, message }] });

/** `sort=-priority,title`: at most 3 keys, none twice, none a json field. Ties are broken by id (added by the query). */
export function parseSort(raw: string | undefined, fields: readonly Field[]): SortKey[] {
  if (raw === undefined || raw === '') return [];
  const names = raw.split(',');
  if (names.length > SORT_MAX_KEYS) throw invalid('sort', `at most ${SORT_MAX_KEYS} keys`);
  const seen = new Set<string>();
  return names.map((item) => {
    const desc = item.startsWith('-');
    const name = desc ? item.slice(1) : item;
    if (seen.has(name)) throw invalid('sort', `"${name}" is named twice`);
    seen.add(name);
    if (Object.hasOwn(RESERVED, name)) return { target: RESERVED[name]!, desc };
    const field = fields.find((f) => f.name === name);
    if (!field) throw invalid('sort', `unknown field "${name.slice(0, 64)}"`);
    if (field.type === 'json') throw invalid('sort', `"${name}" is a json field, which does not sort`);
    return { target: { kind: 'data', name, type: field.type }, desc };
  });
}

/** `fields=a,b`: the data fields an answer keeps; the record's own members are always there. */
export function parseProjection(raw: string | undefined, fields: readonly Field[]): string[] | null {
  if (raw === undefined) return null;
  const names = raw === '' ? [] : raw.split(',');
  const known = new Set(fields.map((f) => f.name));
  for (const name of names) {
    if (!known.has(name) && !Object.hasOwn(RESERVED, name) && name !== 'collection') throw invalid('fields', `unknown field "${name.slice(0, 64)}"`);
  }
  return names.filter((n) => known.has(n));
}

/** Ties a cursor to the filter and sort it was issued for: another query's cursor is refused. */
export const queryFingerprint = (filter: string, sort: string): string =>
  createHash('sha256').update(`${filter}\u0000${sort}`).digest('base64url').slice(0, 16);

export interface Keyset {
  /** The last row's sort values, one per sort key (null: the row had none). */
  values: Array<string | number | boolean | null>;
  id: string;
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

const keysetMac = (k: Keyset, binding: KeysetBinding): string => binding.mac(`${binding.fingerprint}\u0000${JSON.stringify([k.id, k.values])}`);

/** base64url of JSON {after, v, q}: the last row's id, its sort values, and the MAC of both with the query. */
export const encodeKeyset = (k: Keyset, binding: KeysetBinding): string =>
  Buffer.from(JSON.stringify({ after: k.id, v: k.values, q: keysetMac(k, binding) })).toString('base64url');

const VALUE_SHAPE: Record<string, (v: unknown) => boolean> = {
  text: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
  datetime: (v) => typeof v === 'string' && /^\d{1,15}\.\d{9}$/.test(v),
};

/** A cursor this service issued for this query, checked value by value against the sort keys and by its MAC; anything else is `invalid_query`. */
export function decodeKeyset(raw: string, keys: readonly SortKey[], binding: KeysetBinding, idShape: RegExp): Keyset {
  const refuse = () => new AppError('invalid_query', 'The cursor is not one this service issued for this filter and sort.', { errors: [{ path: 'cursor', message: 'unknown cursor' }] });
  let parsed: { after?: unknown; v?: unknown; q?: unknown };
  try {
    if (!/^[A-Za-z0-9_-]{1,16384}$/.test(raw)) throw refuse();
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as typeof parsed;
  } catch {
    throw refuse();
  }
  if (parsed === null || typeof parsed !== 'object' || Object.keys(parsed).length !== 3 || typeof parsed.q !== 'string') throw refuse();
  if (typeof parsed.after !== 'string' || !idShape.test(parsed.after)) throw refuse();
  const values = parsed.v;
  if (!Array.isArray(values) || values.length !== keys.length) throw refuse();
  keys.forEach((k, i) => {
    const v: unknown = values[i];
    const type = k.target.kind === 'data' ? k.target.type : k.target.kind === 'id' ? 'text' : 'integer';
    if (v === null ? k.target.kind !== 'data' : !VALUE_SHAPE[type]!(v)) throw refuse();
  });
  const keyset = { id: parsed.after, values: values as Keyset['values'] };
  if (!safeEqual(parsed.q, keysetMac(keyset, binding))) throw refuse();
  return keyset;
}
