import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/** A filter as the generator builds it; printed to text for svc, evaluated here straight from SPEC §8's words. */
type Node = { and: Node[] } | { or: Node[] } | { not: Node } | { field: string; op: string; value: unknown };
type Type = 'text' | 'integer' | 'number' | 'boolean' | 'datetime' | 'json';

const FIELDS: Array<{ name: string; type: Type }> = [
  { name: 't', type: 'text' }, { name: 'n', type: 'integer' }, { name: 'x', type: 'number' },
  { name: 'b', type: 'boolean' }, { name: 'd', type: 'datetime' }, { name: 'j', type: 'json' },
];
const POOLS: Record<Type, unknown[]> = {
  text: ['a', 'A', 'ä', 'Ä', 'Σσ', 'ς', 'İx', 'i', '%', '_', '\\', "it's", 'say "hi"', '😀', '\uffff', '', ' b', 'ab', 'B'],
  integer: [-2, -1, 0, 1, 2, 3, 9007199254740991],
  number: [-1.5, 0, 0.1, 2, 2.5, 1e21, -0.000001],
  boolean: [true, false],
  datetime: ['2026-01-01T10:00:00Z', '2026-01-01T12:00:00+02:00', '2026-01-01T10:00:00.000000001Z', '2025-12-31T23:59:59-23:59', '2026-06-30T00:00:00.5+05:30', '2026-01-01t10:00:00z'],
  json: [{ a: 1 }, [1], 'x', 0],
};
const OPS: Record<Type, string[]> = {
  text: ['=', '!=', '>', '>=', '<', '<=', '~', '!~'],
  integer: ['=', '!=', '>', '>=', '<', '<='],
  number: ['=', '!=', '>', '>=', '<', '<='],
  boolean: ['=', '!='],
  datetime: ['=', '!=', '>', '>=', '<', '<='],
  json: [],
};

const codePoints = (s: string) => Array.from(s, (c) => c.codePointAt(0)!);
function cmpCodePoints(a: string, b: string): number {
  const x = codePoints(a);
  const y = codePoints(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}
// Unicode simple lowercase: one code point to one (İ → i; everything else as toLowerCase maps a lone code point).
const lower = (s: string) => Array.from(s, (c) => (c === 'İ' ? 'i' : c.toLowerCase().length === c.length ? c.toLowerCase() : c)).join('');
function instantNs(s: string): bigint {
  const m = /^(.{19})(\.\d+)?(.*)$/.exec(s.toUpperCase())!;
  return BigInt(Date.parse(m[1]! + m[3]!)) * 1_000_000n + BigInt(((m[2] ?? '.').slice(1) + '000000000').slice(0, 9));
}

function evaluate(node: Node, data: Record<string, unknown>): boolean {
  if ('and' in node) return node.and.every((n) => evaluate(n, data));
  if ('or' in node) return node.or.some((n) => evaluate(n, data));
  if ('not' in node) return !evaluate(node.not, data);
  const v = data[node.field];
  const absent = v === undefined || v === null;
  if (node.value === null) return node.op === '=' ? absent : !absent;
  if (absent) return false;
  const type = FIELDS.find((f) => f.name === node.field)!.type;
  if (node.op === '~' || node.op === '!~') return lower(v as string).includes(lower(node.value as string)) === (node.op === '~');
  let c: number;
  if (type === 'text') c = cmpCodePoints(v as string, node.value as string);
  else if (type === 'datetime') c = Number(instantNs(v as string) - instantNs(node.value as string));
  else if (type === 'boolean') c = Number(v) - Number(node.value);
  else c = (v as number) - (node.value as number);
  return { '=': c === 0, '!=': c !== 0, '>': c > 0, '>=': c >= 0, '<': c < 0, '<=': c <= 0 }[node.op]!;
}

function literal(v: unknown, quote: string): string {
  if (v === null || typeof v !== 'string') return String(v);
  return `${quote}${v.replace(/\\/g, '\\\\').replace(quote === "'" ? /'/g : /"/g, `\\${quote}`)}${quote}`;
}
function print(node: Node): string {
  if ('and' in node) return `(${node.and.map(print).join(' && ')})`;
  if ('or' in node) return `(${node.or.map(print).join('||')})`;
  if ('not' in node) return `!${print(node.not)}`;
  return `${node.field} ${node.op} ${literal(node.value, node.field === 't' ? '"' : "'")}`;
}

const comparison: fc.Arbitrary<Node> = fc.constantFrom(...FIELDS).chain((f) =>
  fc.oneof(
    fc.record({ field: fc.constant(f.name), op: fc.constantFrom('=', '!='), value: fc.constant(null) }),
    ...(f.type === 'json' ? [] : [fc.record({ field: fc.constant(f.name), op: fc.constantFrom(...OPS[f.type]), value: fc.constantFrom(...POOLS[f.type]) })]),
  ),
);
const { tree } = fc.letrec<{ tree: Node }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    comparison,
    fc.record({ not: tie('tree') }),
    fc.record({ and: fc.array(tie('tree'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('tree'), { minLength: 2, maxLength: 3 }) }),
  ),
}));

const recordData = fc.record(
  Object.fromEntries(FIELDS.map((f) => [f.name, fc.oneof(fc.constant(undefined), fc.constant(null), fc.constantFrom(...POOLS[f.type]))])),
);

describe.each(DIALECTS)('record queries (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  const stored: Array<{ id: string; data: Record<string, unknown> }> = [];
  const list = (query: string) => t.app.inject({ method: 'GET', url: `/api/v1/collections/things/records?${query}`, headers: auth });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.collection('things', FIELDS.map((f) => ({ name: f.name, type: f.type })));
    auth = { authorization: `Bearer ${await t.token()}` };
    const samples = fc.sample(recordData, { numRuns: 60, seed: 42 });
    for (const s of [...samples, ...POOLS.text.map((v) => ({ t: v })), ...POOLS.datetime.map((v) => ({ d: v }))]) {
      const data = Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/things/records', headers: auth, payload: { data } });
      expect(res.statusCode).toBe(201);
      stored.push({ id: (res.json() as { id: string }).id, data });
    }
  }, 60_000);
  afterAll(async () => t?.close());

  it('agrees with svc\'s own evaluator and an evaluator written from the grammar on random filters', async () => {
    const { checkFilter } = await import('../../src/records/query/check.js');
    const { matchesFilter } = await import('../../src/records/query/evaluate.js');
    const fields = FIELDS.map((f) => ({ ...f, required: false }));
    await fc.assert(
      fc.asyncProperty(tree, async (node) => {
        const text = print(node);
        const res = await list(`limit=500&count=true&filter=${encodeURIComponent(text)}`);
        expect(res.statusCode, `${text}: ${res.body}`).toBe(200);
        const body = res.json() as { items: Array<{ id: string }>; totalCount: number };
        const expected = stored.filter((r) => evaluate(node, r.data)).map((r) => r.id);
        expect(body.items.map((i) => i.id), text).toEqual(expected);
        expect(body.totalCount).toBe(expected.length);
        const checked = checkFilter(text, fields);
        if (!('filter' in checked)) throw new Error(text);
        const own = stored.filter((r) => matchesFilter(checked.filter, { id: r.id, version: 1, createdAt: 0, updatedAt: 0, data: r.data })).map((r) => r.id);
        expect(own, text).toEqual(expected);
      }),
      { numRuns: 150, seed: 7 },
    );
  }, 120_000);

  it('refuses injection attempts or answers them correctly, never with an SQL error', async () => {
    const attempts = [
      `t = "'; drop table records; --"`, `t = '\\' or 1=1 --'`, `t ~ "%"`, `t ~ "_"`, `t ~ "a%' --"`, `t = "/* x */"`,
      `t = "\u0000"`, `t' = 'a'`, `"t" = 'a'`, `t = 'a' -- '`, `t = 'a' ; select 1`, `n = 1; drop table records`,
      `t = "${'x'.repeat(3000)}"`, `${'('.repeat(400)}`, `data = 'x'`, `t = 'a' || json_extract(data,'$.t') = 'a'`,
    ];
    for (const filter of attempts) {
      const res = await list(`filter=${encodeURIComponent(filter)}`);
      expect([200, 400], filter).toContain(res.statusCode);
      if (res.statusCode === 400) expect((res.json() as { code: string }).code).toBe('invalid_query');
    }
    const wild = await list(`filter=${encodeURIComponent('t ~ "%"')}`);
    expect((wild.json() as { items: Array<{ data: { t: string } }> }).items.map((i) => i.data.t)).toEqual(stored.filter((r) => String(r.data.t ?? '').includes('%')).map((r) => r.data.t));
    for (const sort of [`t'`, `t;drop`, `-`, `--t`, `t,t`, `a,b,c,d`, `j`, `"t"`, 'x'.repeat(300), `t%20desc`]) {
      const res = await list(`sort=${encodeURIComponent(sort)}`);
      expect(res.statusCode, sort).toBe(400);
      expect((res.json() as { code: string }).code).toBe('invalid_query');
    }
    const fieldsRes = await list(`fields=${encodeURIComponent("t'),data")}`);
    expect(fieldsRes.statusCode).toBe(400);
  });

  it('reports a fault with its path, message and code-point position', async () => {
    const res = await list(`filter=${encodeURIComponent('t = "😀" && nope = 1')}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ path: 'filter', message: 'unknown field "nope"', position: 11 }] });
  });
  it('a blank filter is no filter, like an empty one', async () => {
    const all = await list('limit=5');
    expect(all.statusCode).toBe(200);
    for (const blank of ['', '%20%20%20', '%09%0A']) {
      const res = await list(`filter=${blank}&limit=5`);
      expect(res.statusCode, blank).toBe(200);
      expect(res.json().items).toEqual(all.json().items);
    }
  });
  it('checks a repeated filter against the collection as it is now, not as it was', async () => {
    const admin = (method: 'POST' | 'DELETE', url: string, payload?: unknown) => t.app.inject({ method, url, headers: t.admin.headers, ...(payload ? { payload } : {}) });
    const get = () => t.app.inject({ method: 'GET', url: `/api/v1/collections/again/records?filter=${encodeURIComponent("f = 'x'")}`, headers: auth });
    expect((await admin('POST', '/admin/v1/collections', { name: 'again', fields: [{ name: 'f', type: 'text' }] })).statusCode).toBe(201);
    expect((await get()).statusCode).toBe(200);
    expect((await get()).statusCode).toBe(200);
    expect((await admin('DELETE', '/admin/v1/collections/again?force=true')).statusCode).toBe(204);
    expect((await admin('POST', '/admin/v1/collections', { name: 'again', fields: [{ name: 'f', type: 'integer' }] })).statusCode).toBe(201);
    const res = await get();
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ path: 'filter', position: 4 }] });
  });
});
