import type { FieldError } from '../errors.js';

export const FIELD_TYPES = ['text', 'number', 'integer', 'boolean', 'datetime', 'json'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface Field {
  name: string;
  type: FieldType;
  required: boolean;
  /** SPEC §8: svc keeps a database index for filtering and sorting on it (records/query/field-index-store.ts). */
  indexed: boolean;
}

export { COLLECTION_NAME } from '../lib/names.js';
export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** `_test` names the webhook.test envelope; user collections match COLLECTION_NAME, which cannot start with `_`. */
export const RESERVED_COLLECTION = '_test';
export const MAX_FIELDS = 200;
export const MAX_INDEXED_FIELDS = 16;

/**
 * Names no new field may take (SPEC Part II): a record's own members, and every built-in property of JavaScript
 * objects, which code reading `data.constructor` or assigning `data.__proto__` would otherwise find or lose. Taken from
 * Object.prototype itself, so the list is complete on every Node version.
 */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(['id', 'collection', 'version', 'createdAt', 'updatedAt', ...Object.getOwnPropertyNames(Object.prototype)]);
const RESERVED_MESSAGE = 'is a reserved name (a record member or a built-in property of JavaScript objects)';

// RFC 3339 date-time with a zone; Date.parse then rejects impossible dates such as 2026-02-31.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

function valueProblem(type: FieldType, value: unknown): string | null {
  switch (type) {
    case 'text':
      return typeof value === 'string' ? null : 'must be a string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value) ? null : 'must be an integer';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'datetime': {
      if (typeof value !== 'string' || !RFC3339.test(value)) return 'must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z';
      const [y, mo, d] = value.slice(0, 10).split('-').map(Number);
      const date = new Date(Date.UTC(y!, mo! - 1, d!));
      return date.getUTCMonth() === mo! - 1 && date.getUTCDate() === d && !Number.isNaN(Date.parse(value)) ? null : 'is not a valid date';
    }
    case 'json':
      return null;
  }
}

const pointer = (name: string): string => `/data/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * Validates record data against the collection's fields: one error per fault, every fault reported.
 * `partial` is a PATCH: absent fields are untouched, `null` clears a field that is not required.
 */
export function validateData(fields: readonly Field[], data: Record<string, unknown>, partial: boolean, indexedTextMaxBytes: number | null = null): FieldError[] {
  const errors: FieldError[] = [];
  const byName = new Map(fields.map((f) => [f.name, f]));
  for (const [key, value] of Object.entries(data)) {
    // JSON.parse makes "__proto__" an own key; any code that assigns it would drop it, so it is never data.
    if (key === '__proto__') {
      errors.push({ path: pointer(key), message: RESERVED_MESSAGE });
      continue;
    }
    const field = byName.get(key);
    if (!field) {
      errors.push({ path: pointer(key), message: 'is not a field of this collection' });
      continue;
    }
    if (value === null) {
      if (field.required) errors.push({ path: pointer(key), message: 'is required and cannot be null' });
      continue;
    }
    const problem = valueProblem(field.type, value);
    if (problem) errors.push({ path: pointer(key), message: problem });
    else if (field.indexed && field.type === 'text' && indexedTextMaxBytes !== null && Buffer.byteLength(value as string) > indexedTextMaxBytes) {
      errors.push({ path: pointer(key), message: `is longer than an indexed text field holds on this database (${indexedTextMaxBytes} bytes of UTF-8): shorten it, or make the field not indexed` });
    }
  }
  if (!partial) {
    for (const f of fields) {
      // Own keys only: `data.constructor` of a plain object is inherited, and must not pass for a value.
      if (f.required && (!Object.hasOwn(data, f.name) || data[f.name] === null)) errors.push({ path: pointer(f.name), message: 'is required' });
    }
  }
  return errors;
}

/**
 * Checks the field list of a new collection, or a PATCH's new list; `current` are the fields the collection has,
 * which keep their names even where the name has since been reserved (their records must stay writable).
 */
export function validateFieldList(fields: readonly Field[], basePath: string, current: readonly Field[] = []): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const kept = new Set(current.map((f) => f.name));
  fields.forEach((f, i) => {
    if (!FIELD_NAME.test(f.name)) errors.push({ path: `${basePath}/${i}/name`, message: 'must match ^[A-Za-z_][A-Za-z0-9_]{0,62}$' });
    else if (RESERVED_FIELD_NAMES.has(f.name) && !kept.has(f.name)) errors.push({ path: `${basePath}/${i}/name`, message: RESERVED_MESSAGE });
    else if (seen.has(f.name)) errors.push({ path: `${basePath}/${i}/name`, message: 'duplicates another field' });
    seen.add(f.name);
  });
  if (seen.size > MAX_FIELDS) errors.push({ path: basePath, message: `at most ${MAX_FIELDS} fields` });
  fields.forEach((f, i) => {
    if (f.indexed && f.type === 'json') errors.push({ path: `${basePath}/${i}/indexed`, message: 'a json field cannot be indexed (it neither sorts nor compares)' });
  });
  if (fields.filter((f) => f.indexed).length > MAX_INDEXED_FIELDS) errors.push({ path: basePath, message: `at most ${MAX_INDEXED_FIELDS} indexed fields` });
  return errors;
}
