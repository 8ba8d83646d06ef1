import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lowercasePairs, simpleLowercase } from '../../src/lib/case-mapping.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * SPEC §12 "One case mapping": every code point folds the same way in JavaScript and in each database's svc_lower,
 * by the table (U+0000 aside: neither database stores it in a record, and svc refuses it in a body).
 */

const lower = new Map(lowercasePairs());
/** Every code point from 1 to U+10FFFF but the surrogates, in texts of 64 Ki code points each. */
const CHUNKS: Array<{ text: string; expected: string }> = [];
for (let start = 1; start <= 0x10ffff; start += 0x10000) {
  const text: string[] = [];
  const expected: string[] = [];
  for (let c = start; c < Math.min(start + 0x10000, 0x110000); c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    text.push(String.fromCodePoint(c));
    expected.push(String.fromCodePoint(lower.get(c) ?? c));
  }
  CHUNKS.push({ text: text.join(''), expected: expected.join('') });
}

/** The first code point where two texts of the same code points differ, for a readable failure. */
function firstDifference(got: string, want: string): string | null {
  const a = [...got];
  const b = [...want];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `at index ${i}: got U+${a[i]?.codePointAt(0)?.toString(16)}, want U+${b[i]?.codePointAt(0)?.toString(16)}`;
  }
  return null;
}

describe.each(DIALECTS)('one case mapping on the database (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.collection('words', [{ name: 'w', type: 'text' }]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterAll(async () => t?.close());

  it('svc_lower folds every code point as the table and JavaScript do', async () => {
    for (const { text, expected } of CHUNKS) {
      expect(simpleLowercase(text) === expected).toBe(true);
      const row = (await sql<{ l: string }>`select svc_lower(${text}) as l`.execute(t.ctx.database.db)).rows[0]!;
      expect(firstDifference(row.l, expected), `chunk from U+${text.codePointAt(0)!.toString(16)}`).toBeNull();
    }
    // A text of capitals alone, and mixed with ASCII capitals, through both paths of PostgreSQL's function.
    const capitals = lowercasePairs().map(([u]) => String.fromCodePoint(u)).join('');
    for (const text of [capitals, `Aa${capitals}Zz`, 'PLAIN ASCII', '']) {
      const row = (await sql<{ l: string }>`select svc_lower(${text}) as l`.execute(t.ctx.database.db)).rows[0]!;
      expect(row.l).toBe(simpleLowercase(text));
    }
    expect((await sql<{ l: string | null }>`select svc_lower(null) as l`.execute(t.ctx.database.db)).rows[0]!.l).toBeNull();
  });

  it('~ and !~ find letters that only newer Unicode versions fold (U+1C89, U+A7DC, Garay, Beria Erfe)', async () => {
    const words = ['x\u1C89y', 'x\u1C8Ay', '\uA7DC lambda', '\u{10D50}\u{10D51}', '\u{16EA0}', 'İSTANBUL', 'plain'];
    const ids = new Map<string, string>();
    for (const w of words) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/words/records', headers: auth, payload: { data: { w } } });
      expect(res.statusCode).toBe(201);
      ids.set(w, res.json().id);
    }
    const found = async (filter: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/words/records?filter=${encodeURIComponent(filter)}`, headers: auth });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().items as Array<{ data: { w: string } }>).map((i) => i.data.w);
    };
    expect(await found("w ~ '\u1C8A'")).toEqual(['x\u1C89y', 'x\u1C8Ay']);
    expect(await found("w ~ '\u1C89'")).toEqual(['x\u1C89y', 'x\u1C8Ay']);
    expect(await found("w ~ 'ƛ'")).toEqual(['\uA7DC lambda']);
    expect(await found("w ~ '\u{10D71}'")).toEqual(['\u{10D50}\u{10D51}']);
    expect(await found("w ~ '\u{16EBB}'")).toEqual(['\u{16EA0}']);
    expect(await found("w ~ 'istanbul'")).toEqual(['İSTANBUL']);
    expect(await found("w !~ '\u1C89' && w !~ 'a'")).toEqual(['\u{10D50}\u{10D51}', '\u{16EA0}']);
  });
});
