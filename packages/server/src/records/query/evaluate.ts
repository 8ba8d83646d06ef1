import { compareCodePoints, instantKey, simpleLowercase } from '../../lib/query-functions.js';
import type { CheckedComparison, Filter, Operand, Target } from './check.js';

/** What a filter reads of a record: its own members (times in Unix milliseconds) and its data. */
export interface FilterableRecord {
  id: string;
  version: number;
  createdAt: number;
  updatedAt: number;
  data: Readonly<Record<string, unknown>>;
}

/** The value a comparison sees, in the operand's terms; undefined when the field is absent or null. */
function read(target: Target, r: FilterableRecord): unknown {
  switch (target.kind) {
    case 'id':
      return r.id;
    case 'version':
      return r.version;
    case 'time':
      return target.column === 'createdAt' ? r.createdAt : r.updatedAt;
    case 'data': {
      const v = Object.hasOwn(r.data, target.name) ? r.data[target.name] : undefined;
      if (v === null || v === undefined) return undefined;
      return target.type === 'datetime' && typeof v === 'string' ? (instantKey(v) ?? undefined) : v;
    }
  }
}

/** −1, 0 or 1; values of the wrong kind (never stored after validation) compare as absent. */
function order(value: unknown, operand: Operand): number | null {
  switch (operand.kind) {
    case 'text':
    case 'instant': {
      if (typeof value !== 'string') return null;
      const c = compareCodePoints(value, operand.kind === 'text' ? operand.value : operand.key);
      return Math.sign(c);
    }
    case 'number':
      return typeof value === 'number' ? Math.sign(value - operand.value) : null;
    case 'boolean':
      return typeof value === 'boolean' ? Number(value) - Number(operand.value) : null;
    case 'ms':
      // A literal with digits below the millisecond lies strictly between two integer milliseconds.
      if (typeof value !== 'number') return null;
      return value === operand.ms ? (operand.fraction ? -1 : 0) : Math.sign(value - operand.ms);
    case 'null':
      return null;
  }
}

/**
 * `~`/`!~` at a bounded cost (SPEC §12): a write judges every filtered target's filter against the same record, so
 * each text is lowered once, not once per comparison. A checked filter is kept by its user (subscription-filter.ts
 * caches them) and its operands are lowered at its first use; a record's values are lowered at most once per field
 * for as long as the record object lives (the judge of one event builds its records once), and the same text looked
 * for in the same value by several targets is looked for once.
 */
const loweredOperands = new WeakMap<CheckedComparison, string>();
const loweredValues = new WeakMap<FilterableRecord, Map<string, { text: string; found: Map<string, boolean> }>>();

function loweredOperand(c: CheckedComparison, text: string): string {
  let lowered = loweredOperands.get(c);
  if (lowered === undefined) loweredOperands.set(c, (lowered = simpleLowercase(text)));
  return lowered;
}

/** Whether the record's value (of `target`) contains `needle`, both lowered. */
function containsLowered(r: FilterableRecord, target: Target, value: string, needle: string): boolean {
  let byField = loweredValues.get(r);
  if (!byField) loweredValues.set(r, (byField = new Map()));
  const key = target.kind === 'data' ? target.name : target.kind;
  let lowered = byField.get(key);
  if (!lowered) byField.set(key, (lowered = { text: simpleLowercase(value), found: new Map() }));
  let found = lowered.found.get(needle);
  if (found === undefined) lowered.found.set(needle, (found = lowered.text.includes(needle)));
  return found;
}

function compare(c: CheckedComparison, r: FilterableRecord): boolean {
  const value = read(c.target, r);
  if (c.operand.kind === 'null') return c.op === '=' ? value === undefined : value !== undefined;
  if (value === undefined) return false;
  if (c.op === '~' || c.op === '!~') {
    if (typeof value !== 'string' || c.operand.kind !== 'text') return false;
    const contains = containsLowered(r, c.target, value, loweredOperand(c, c.operand.value));
    return c.op === '~' ? contains : !contains;
  }
  const o = order(value, c.operand);
  if (o === null) return false;
  switch (c.op) {
    case '=':
      return o === 0;
    case '!=':
      return o !== 0;
    case '>':
      return o > 0;
    case '>=':
      return o >= 0;
    case '<':
      return o < 0;
    case '<=':
      return o <= 0;
  }
}

/** Whether a record matches a checked filter: the same answer as the SQL the compiler builds, on both databases. */
export function matchesFilter(filter: Filter, r: FilterableRecord): boolean {
  switch (filter.type) {
    case 'and':
      return filter.items.every((i) => matchesFilter(i, r));
    case 'or':
      return filter.items.some((i) => matchesFilter(i, r));
    case 'not':
      return !matchesFilter(filter.item, r);
    case 'cmp':
      return compare(filter, r);
  }
}
