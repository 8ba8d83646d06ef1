/**
 * The filter language of SPEC §8, by hand-written recursive descent. Positions are zero-based offsets in Unicode code
 * points (the SPEC's unit), so the input is handled as an array of code points, never as UTF-16 units.
 */

export type Op = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~' | '!~';
export type Literal = { kind: 'text'; value: string } | { kind: 'number'; value: number; raw: string } | { kind: 'boolean'; value: boolean } | { kind: 'null' };

export type Expr =
  | { type: 'or'; items: Expr[] }
  | { type: 'and'; items: Expr[] }
  | { type: 'not'; item: Expr; position: number }
  | Comparison;

export interface Comparison {
  type: 'cmp';
  field: string;
  op: Op;
  literal: Literal;
  fieldPosition: number;
  opPosition: number;
  literalPosition: number;
}

export const FILTER_MAX_LENGTH = 2048;
export const FILTER_MAX_COMPARISONS = 50;
export const FILTER_MAX_DEPTH = 10;

export class QuerySyntaxError extends Error {
  constructor(message: string, readonly position: number) {
    super(message);
  }
}

type Token =
  | { t: 'op'; v: Op; pos: number }
  | { t: 'and' | 'or' | 'not' | '(' | ')' | 'end'; pos: number }
  | { t: 'ident'; v: string; pos: number }
  | { t: 'lit'; v: Literal; pos: number };

const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/;
const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_]/;

function lex(cps: string[]): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < cps.length) {
    const c = cps[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const pos = i;
    const two = c + (cps[i + 1] ?? '');
    if (two === '&&') tokens.push({ t: 'and', pos }), (i += 2);
    else if (two === '||') tokens.push({ t: 'or', pos }), (i += 2);
    else if (two === '!=' || two === '>=' || two === '<=' || two === '!~') tokens.push({ t: 'op', v: two, pos }), (i += 2);
    else if (c === '=' || c === '>' || c === '<' || c === '~') tokens.push({ t: 'op', v: c, pos }), i++;
    else if (c === '!') tokens.push({ t: 'not', pos }), i++;
    else if (c === '(' || c === ')') tokens.push({ t: c, pos }), i++;
    else if (c === "'" || c === '"') {
      let value = '';
      i++;
      for (;;) {
        const d = cps[i];
        if (d === undefined) throw new QuerySyntaxError('unterminated text literal', pos);
        if (d === c) break;
        if (d === '\\') {
          const e = cps[i + 1];
          if (e !== "'" && e !== '"' && e !== '\\') throw new QuerySyntaxError('unknown escape (only \\\' \\" \\\\)', i);
          value += e;
          i += 2;
          continue;
        }
        // PostgreSQL's text cannot hold NUL: refused on both databases alike.
        if (d === '\u0000') throw new QuerySyntaxError('NUL (U+0000) is not allowed in a text literal', i);
        value += d;
        i++;
      }
      i++;
      tokens.push({ t: 'lit', v: { kind: 'text', value }, pos });
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const m = NUMBER.exec(cps.slice(i, i + 400).join(''));
      if (!m) throw new QuerySyntaxError('malformed number', pos);
      const next = cps[i + m[0].length];
      if (next !== undefined && (IDENT_PART.test(next) || next === '.')) throw new QuerySyntaxError('malformed number', pos);
      const value = Number(m[0]);
      if (!Number.isFinite(value)) throw new QuerySyntaxError('number out of range', pos);
      tokens.push({ t: 'lit', v: { kind: 'number', value, raw: m[0] }, pos });
      i += m[0].length;
    } else if (IDENT_START.test(c)) {
      let word = '';
      while (i < cps.length && IDENT_PART.test(cps[i]!)) word += cps[i++];
      if (word === 'true' || word === 'false') tokens.push({ t: 'lit', v: { kind: 'boolean', value: word === 'true' }, pos });
      else if (word === 'null') tokens.push({ t: 'lit', v: { kind: 'null' }, pos });
      else tokens.push({ t: 'ident', v: word, pos });
    } else {
      throw new QuerySyntaxError(`unexpected character ${JSON.stringify(c)}`, pos);
    }
  }
  tokens.push({ t: 'end', pos: cps.length });
  return tokens;
}

/** Parses a filter expression into its tree; syntax errors and the SPEC's size limits throw QuerySyntaxError. */
export function parseFilter(input: string): Expr {
  const cps = [...input];
  if (cps.length > FILTER_MAX_LENGTH) throw new QuerySyntaxError(`longer than ${FILTER_MAX_LENGTH} characters`, FILTER_MAX_LENGTH);
  const tokens = lex(cps);
  let k = 0;
  let comparisons = 0;
  const peek = () => tokens[k]!;
  const expected = (what: string): never => {
    const tok = peek();
    throw new QuerySyntaxError(tok.t === 'end' ? `expected ${what}, found the end` : `expected ${what}`, tok.pos);
  };

  const expr = (depth: number): Expr => {
    const items = [disjunct(depth)];
    while (peek().t === 'or') {
      k++;
      items.push(disjunct(depth));
    }
    return items.length === 1 ? items[0]! : { type: 'or', items };
  };
  const disjunct = (depth: number): Expr => {
    const items = [unary(depth)];
    while (peek().t === 'and') {
      k++;
      items.push(unary(depth));
    }
    return items.length === 1 ? items[0]! : { type: 'and', items };
  };
  const unary = (depth: number): Expr => {
    const tok = peek();
    if (tok.t === 'not' || tok.t === '(') {
      if (depth >= FILTER_MAX_DEPTH) throw new QuerySyntaxError(`nested more than ${FILTER_MAX_DEPTH} deep`, tok.pos);
      k++;
      if (tok.t === 'not') return { type: 'not', item: unary(depth + 1), position: tok.pos };
      const inner = expr(depth + 1);
      if (peek().t !== ')') expected('")"');
      k++;
      return inner;
    }
    return comparison();
  };
  const comparison = (): Comparison => {
    const field = peek();
    if (field.t !== 'ident') return expected('a field name');
    k++;
    const op = peek();
    if (op.t !== 'op') return expected('an operator (= != > >= < <= ~ !~)');
    k++;
    const lit = peek();
    if (lit.t !== 'lit') return expected('a literal (text, number, true, false or null)');
    k++;
    if (++comparisons > FILTER_MAX_COMPARISONS) throw new QuerySyntaxError(`more than ${FILTER_MAX_COMPARISONS} comparisons`, field.pos);
    return { type: 'cmp', field: field.v, op: op.v, literal: lit.v, fieldPosition: field.pos, opPosition: op.pos, literalPosition: lit.pos };
  };

  const tree = expr(0);
  if (peek().t !== 'end') expected('"&&", "||" or the end');
  return tree;
}
