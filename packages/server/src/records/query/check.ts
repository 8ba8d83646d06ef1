import { AppError } from '../../errors.js';
import { instantKey } from '../../lib/query-functions.js';
import type { Field, FieldType } from '../fields.js';
import { parseFilter, QuerySyntaxError, type Comparison, type Expr, type Literal, type Op } from './parser.js';

/**
 * What a comparison reads: a field inside `data`, or one of the record's own columns (SPEC §8: id, createdAt,
 * updatedAt, version). `createdAt`/`updatedAt` are Unix milliseconds; datetime fields are RFC 3339 texts.
 */
export type Target =
  | { kind: 'data'; name: string; type: FieldType }
  | { kind: 'id' }
  | { kind: 'version' }
  | { kind: 'time'; column: 'createdAt' | 'updatedAt' };

/**
 * A comparison's operand, ready for both the SQL compiler and the JavaScript evaluator: text as is (or lowercased for
 * `~`), numbers, booleans, datetime fields as instantKey texts, record times as milliseconds plus whether the literal
 * has a part below the millisecond (so comparisons with integer milliseconds stay exact).
 */
export type Operand =
  | { kind: 'null' }
  | { kind: 'text'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'instant'; key: string }
  | { kind: 'ms'; ms: number; fraction: boolean };

export interface CheckedComparison {
  type: 'cmp';
  target: Target;
  op: Op;
  operand: Operand;
}

export type Filter = { type: 'or' | 'and'; items: Filter[] } | { type: 'not'; item: Filter } | CheckedComparison;

export interface FilterFault {
  message: string;
  position: number;
}

const RESERVED: Record<string, Target> = {
  id: { kind: 'id' },
  version: { kind: 'version' },
  createdAt: { kind: 'time', column: 'createdAt' },
  updatedAt: { kind: 'time', column: 'updatedAt' },
};

const targetType = (t: Target): FieldType => (t.kind === 'data' ? t.type : t.kind === 'id' ? 'text' : t.kind === 'version' ? 'integer' : 'datetime');

/** Milliseconds of an RFC 3339 text, and whether it has digits below the millisecond. */
function toMs(text: string): { ms: number; fraction: boolean } | null {
  const key = instantKey(text);
  if (key === null) return null;
  const [seconds, nanos] = key.split('.') as [string, string];
  // Unix ms from the shifted key: exact integers (well inside 2^53).
  const ms = (Number(seconds) - 62167305600) * 1000 + Number(nanos.slice(0, 3));
  return { ms, fraction: Number(nanos.slice(3)) !== 0 };
}

function literalName(l: Literal): string {
  return l.kind === 'null' ? 'null' : l.kind === 'boolean' ? String(l.value) : l.kind;
}

function checkComparison(c: Comparison, fields: ReadonlyMap<string, Field>): CheckedComparison | FilterFault {
  const field = fields.get(c.field);
  const target: Target | undefined = Object.hasOwn(RESERVED, c.field) ? RESERVED[c.field] : field ? { kind: 'data', name: field.name, type: field.type } : undefined;
  if (!target) return { message: `unknown field "${c.field}"`, position: c.fieldPosition };
  const type = targetType(target);
  const lit = c.literal;
  if (lit.kind === 'null') {
    if (c.op !== '=' && c.op !== '!=') return { message: 'null compares only with = or !=', position: c.opPosition };
    return { type: 'cmp', target, op: c.op, operand: { kind: 'null' } };
  }
  if (type === 'json') return { message: `"${c.field}" is a json field: only = null and != null apply`, position: c.opPosition };
  if ((c.op === '~' || c.op === '!~') && type !== 'text') return { message: `${c.op} applies to text fields only`, position: c.opPosition };
  if (type === 'boolean' && c.op !== '=' && c.op !== '!=') return { message: `${c.op} does not apply to a boolean field`, position: c.opPosition };
  const wrong = { message: `"${c.field}" is ${type === 'integer' ? 'an integer' : `a ${type}`} field; ${literalName(lit)} does not fit`, position: c.literalPosition };
  switch (type) {
    case 'text':
      return lit.kind === 'text' ? { type: 'cmp', target, op: c.op, operand: { kind: 'text', value: lit.value } } : wrong;
    case 'number':
    case 'integer':
      if (lit.kind !== 'number' || (type === 'integer' && !Number.isSafeInteger(lit.value))) return wrong;
      return { type: 'cmp', target, op: c.op, operand: { kind: 'number', value: lit.value } };
    case 'boolean':
      return lit.kind === 'boolean' ? { type: 'cmp', target, op: c.op, operand: { kind: 'boolean', value: lit.value } } : wrong;
    case 'datetime': {
      if (lit.kind !== 'text') return wrong;
      const notInstant = { message: 'expected an RFC 3339 date-time such as 2026-01-31T12:00:00Z', position: c.literalPosition };
      if (!validDate(lit.value)) return notInstant;
      if (target.kind === 'time') return { type: 'cmp', target, op: c.op, operand: { kind: 'ms', ...toMs(lit.value)! } };
      return { type: 'cmp', target, op: c.op, operand: { kind: 'instant', key: instantKey(lit.value)! } };
    }
  }
}

/** The same acceptance as a datetime field's values (fields.ts): a real calendar date and a time Date.parse takes. */
function validDate(text: string): boolean {
  if (instantKey(text) === null) return false;
  const [y, mo, d] = text.slice(0, 10).split('-').map(Number);
  const date = new Date(Date.UTC(y!, mo! - 1, d!));
  return date.getUTCMonth() === mo! - 1 && date.getUTCDate() === d && !Number.isNaN(Date.parse(text));
}

function checkTree(e: Expr, fields: ReadonlyMap<string, Field>, faults: FilterFault[]): Filter {
  switch (e.type) {
    case 'or':
    case 'and':
      return { type: e.type, items: e.items.map((i) => checkTree(i, fields, faults)) };
    case 'not':
      return { type: 'not', item: checkTree(e.item, fields, faults) };
    case 'cmp': {
      const r = checkComparison(e, fields);
      if ('message' in r) {
        faults.push(r);
        return { type: 'and', items: [] };
      }
      return r;
    }
  }
}

/** Parses and type-checks a filter against a collection's fields: the tree, or every fault found (syntax: the first). */
export function checkFilter(input: string, fields: readonly Field[]): { filter: Filter } | { faults: FilterFault[] } {
  let tree: Expr;
  try {
    tree = parseFilter(input);
  } catch (err) {
    if (err instanceof QuerySyntaxError) return { faults: [{ message: err.message, position: err.position }] };
    throw err;
  }
  const faults: FilterFault[] = [];
  const filter = checkTree(tree, new Map(fields.map((f) => [f.name, f])), faults);
  return faults.length > 0 ? { faults } : { filter };
}

/** checkFilter for a query parameter: faults become one `invalid_query` naming the parameter and each position. */
export function filterOrThrow(input: string, fields: readonly Field[], parameter = 'filter'): Filter {
  const r = checkFilter(input, fields);
  if ('filter' in r) return r.filter;
  throw new AppError('invalid_query', `The ${parameter} is not valid: ${r.faults[0]!.message} at position ${r.faults[0]!.position}.`, {
    errors: r.faults.map((f) => ({ path: parameter, message: f.message, position: f.position })),
  });
}
