import { createHash } from 'node:crypto';
import { AppError } from '../../errors.js';
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
