import { sql, type RawBuilder } from 'kysely';
import type { QueryDialect, QueryValueType } from '../../db/dialects/types.js';
import { simpleLowercase } from '../../lib/query-functions.js';
import { FIELD_NAME } from '../fields.js';
import type { CheckedComparison, Filter, Operand, Target } from './check.js';

/** A target's SQL expression; data fields are checked identifiers (asserted again: this text is spliced). */
export function targetSql(q: QueryDialect, target: Target): { text: string; type: QueryValueType; nullable: boolean } {
  switch (target.kind) {
    case 'id':
      return { text: q.idText, type: 'text', nullable: false };
    case 'version':
      return { text: 'version', type: 'integer', nullable: false };
    case 'time':
      return { text: target.column === 'createdAt' ? 'created_at' : 'updated_at', type: 'integer', nullable: false };
    case 'data':
      if (!FIELD_NAME.test(target.name)) throw new Error(`not a field name: ${target.name}`);
      return { text: q.field(target.name, target.type), type: target.type, nullable: true };
  }
}

const NEGATED = { '=': '!=', '!=': '=', '>': '<=', '>=': '<', '<': '>=', '<=': '>' } as const;
type OrderOp = keyof typeof NEGATED;

function operandValue(o: Exclude<Operand, { kind: 'null' }>): string | number | boolean {
  switch (o.kind) {
    case 'text':
    case 'number':
    case 'boolean':
      return o.value;
    case 'instant':
      return o.key;
    case 'ms':
      return o.ms;
  }
}

/**
 * A literal with digits below the millisecond against integer milliseconds: the same answer with an integer operand
 * (x > 5.3 ⇔ x > 5, x >= 5.3 ⇔ x > 5, x < 5.3 ⇔ x <= 5, x = 5.3 never).
 */
function msOp(op: OrderOp, fraction: boolean): OrderOp | boolean {
  if (!fraction) return op;
  return ({ '=': false, '!=': true, '>': '>', '>=': '>', '<': '<=', '<=': '<=' } as const)[op];
}

/**
 * One comparison, already negated when `negate`: SQL's NULL never reaches a NOT, so the result is two-valued as
 * SPEC §8 asks (a comparison with an absent field is false, its negation true), and positive comparisons stay plain
 * `expr op ?` that an index can serve.
 */
function comparisonSql(q: QueryDialect, c: CheckedComparison, negate: boolean): RawBuilder<boolean> {
  const t = targetSql(q, c.target);
  const expr = sql.raw(t.text);
  if (c.operand.kind === 'null') {
    const isNull = (c.op === '=') !== negate;
    return isNull ? sql<boolean>`${expr} is null` : sql<boolean>`${expr} is not null`;
  }
  const orNull = (inner: RawBuilder<boolean>) => (negate && t.nullable ? sql<boolean>`(${expr} is null or ${inner})` : inner);
  if (c.op === '~' || c.op === '!~') {
    if (c.target.kind !== 'data' || c.operand.kind !== 'text') throw new Error('~ on a non-text target');
    const contains = q.contains(c.target.name, simpleLowercase(c.operand.value));
    // Contains when `~` holds, or when `!~` is negated; an absent value then satisfies only the negated form.
    const wantContains = (c.op === '~') !== negate;
    return orNull(wantContains ? contains : sql<boolean>`not ${contains}`);
  }
  let op: OrderOp = negate ? NEGATED[c.op] : c.op;
  if (c.operand.kind === 'ms') {
    const adjusted = msOp(op, c.operand.fraction);
    if (typeof adjusted === 'boolean') return adjusted ? sql<boolean>`1 = 1` : sql<boolean>`1 = 0`;
    op = adjusted;
  }
  const value = q.param(operandValue(c.operand), c.operand.kind === 'instant' ? 'datetime' : t.type);
  return orNull(sql<boolean>`${expr} ${sql.raw(op === '!=' ? '<>' : op)} ${value}`);
}

/** The data fields that `~` and `!~` terms of the filter name, each once (QueryDialect.loweredFrom lowers them). */
export function containedFields(f: Filter): string[] {
  const names = new Set<string>();
  const walk = (x: Filter): void => {
    if (x.type === 'not') walk(x.item);
    else if (x.type === 'cmp') {
      if ((x.op === '~' || x.op === '!~') && x.target.kind === 'data') names.add(x.target.name);
    } else x.items.forEach(walk);
  };
  walk(f);
  return [...names];
}

/**
 * The relation a records query reads: `records`, and on PostgreSQL the fields its `~` terms name, lowered once a row
 * (QueryDialect.loweredFrom). Field names are checked identifiers (asserted again: this text is spliced).
 */
export function recordsFromSql(q: QueryDialect, filter: Filter | null | undefined): RawBuilder<unknown> {
  const names = filter && q.loweredFrom ? containedFields(filter) : [];
  if (names.length === 0 || !q.loweredFrom) return sql.raw('records');
  for (const name of names) if (!FIELD_NAME.test(name)) throw new Error(`not a field name: ${name}`);
  return sql.raw(`records${q.loweredFrom(names)}`);
}

/** The filter as a SQL condition, negations pushed down to the comparisons (De Morgan). */
export function filterSql(q: QueryDialect, f: Filter, negate = false): RawBuilder<boolean> {
  switch (f.type) {
    case 'not':
      return filterSql(q, f.item, !negate);
    case 'and':
    case 'or': {
      const joinAnd = (f.type === 'and') !== negate;
      if (f.items.length === 0) return joinAnd ? sql<boolean>`1 = 1` : sql<boolean>`1 = 0`;
      const parts = f.items.map((i) => filterSql(q, i, negate));
      return sql<boolean>`(${sql.join(parts, sql.raw(joinAnd ? ' and ' : ' or '))})`;
    }
    case 'cmp':
      return comparisonSql(q, f, negate);
  }
}
