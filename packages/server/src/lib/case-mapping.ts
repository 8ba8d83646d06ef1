import { endianness } from 'node:os';
import { CASE_MAPPING_UNICODE_VERSION, SIMPLE_LOWERCASE_RUNS } from './case-mapping-data.js';

/**
 * svc's one case mapping (SPEC §12): the Unicode simple lowercase mapping of case-mapping-data.ts, used by `~`/`!~` in
 * JavaScript (webhook subscriptions, SQLite's svc_lower) and, as SQL generated from the same table, by PostgreSQL's
 * svc_lower (migration 013). Neither Node's ICU nor the database server's locale decides how a letter folds, so both
 * databases and every Node version agree on every code point.
 */

export { CASE_MAPPING_UNICODE_VERSION };

/** Every [upper, lower] pair of the table, ascending by upper. */
export function lowercasePairs(): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  for (const [first, count, stride, delta] of SIMPLE_LOWERCASE_RUNS) {
    for (let i = 0; i < count; i++) pairs.push([first + i * stride, first + i * stride + delta]);
  }
  return pairs;
}

// Each UTF-16 unit of the BMP to its lowercase unit (surrogates to themselves): 128 KiB, one lookup per unit.
const BMP = new Uint16Array(0x10000);
for (let u = 0; u < 0x10000; u++) BMP[u] = u;
// Above the BMP few scripts have case; every one of their letters maps within its plane, so a surrogate pair stays one.
const ASTRAL = new Map<number, number>();
// The high surrogates that start an astral letter with a mapping: any other pair is copied without a look-up.
const ASTRAL_HIGH = new Uint8Array(0x400);
for (const [upper, lower] of lowercasePairs()) {
  if (upper <= 0xffff) {
    if (lower > 0xffff) throw new Error(`U+${upper.toString(16)} lowercases out of the BMP`);
    BMP[upper] = lower;
  } else {
    if (lower <= 0xffff) throw new Error(`U+${upper.toString(16)} lowercases into the BMP`);
    ASTRAL.set(upper, lower);
    ASTRAL_HIGH[(upper - 0x10000) >> 10] = 1;
  }
}

/** How much text was lowered, in calls and UTF-16 units: what a write's subscription judging costs (its test reads it). */
export const lowercaseWork = { texts: 0, units: 0 };

const NOT_ASCII = /[^\x00-\x7f]/;

/** The lowercase of an astral code point given as its surrogates, or -1 when it has none. */
function astralLower(high: number, low: number): number {
  if (ASTRAL_HIGH[high - 0xd800] !== 1 || low < 0xdc00 || low > 0xdfff) return -1;
  return ASTRAL.get(((high - 0xd800) << 10) + (low - 0xdc00) + 0x10000) ?? -1;
}

/**
 * UTF-16 units to a string. A Buffer decodes them as UTF-16LE in one native call (lone surrogates kept, unlike a
 * TextDecoder); on a big-endian machine the typed array's bytes are the other way round, so it takes slices instead.
 */
const fromUnits =
  endianness() === 'LE'
    ? (units: Uint16Array): string => Buffer.from(units.buffer, units.byteOffset, units.byteLength).toString('utf16le')
    : (units: Uint16Array): string => {
        const parts: string[] = [];
        for (let i = 0; i < units.length; i += 8192) parts.push(String.fromCharCode.apply(null, units.subarray(i, i + 8192) as unknown as number[]));
        return parts.join('');
      };

/**
 * The text with every code point replaced by its simple lowercase (one code point to one, so the length in units never
 * changes; a lone surrogate stays as it is). ASCII text takes toLowerCase, which maps ASCII exactly as the table does;
 * other text is read unit by unit through the table and built once, in a typed array.
 */
export function simpleLowercase(text: string): string {
  lowercaseWork.texts++;
  lowercaseWork.units += text.length;
  if (!NOT_ASCII.test(text)) return text.toLowerCase();
  const n = text.length;
  let i = 0;
  // Most non-ASCII text is lowercase already: nothing is allocated until a unit changes.
  for (; i < n; i++) {
    const u = text.charCodeAt(i);
    if (BMP[u] !== u) break;
    if (u >= 0xd800 && u <= 0xdbff && i + 1 < n && astralLower(u, text.charCodeAt(i + 1)) !== -1) break;
  }
  if (i === n) return text;
  const out = new Uint16Array(n);
  for (let j = 0; j < i; j++) out[j] = text.charCodeAt(j);
  for (; i < n; i++) {
    const u = text.charCodeAt(i);
    const lower = u >= 0xd800 && u <= 0xdbff && i + 1 < n ? astralLower(u, text.charCodeAt(i + 1)) : -1;
    if (lower === -1) {
      out[i] = BMP[u]!;
      continue;
    }
    out[i] = 0xd800 + ((lower - 0x10000) >> 10);
    out[++i] = 0xdc00 + ((lower - 0x10000) & 0x3ff);
  }
  return fromUnits(out);
}

/**
 * The same mapping as SQL functions for PostgreSQL, created by migration 013. `svc_lower` folds text without a
 * non-ASCII capital (most text) with `lower()` under the "C" collation, which maps A–Z alone whatever the server's
 * locale. Text with one goes through `svc_lower_letters`, which cuts it around each such capital and looks each up in
 * the table as jsonb, in time linear in the text. (`translate()` with the table's 1,462 capitals scans that list for
 * every character, 7 µs each, and cannot be cancelled meanwhile: a statement timeout would not stop it.) Regular
 * expressions compare these letters by code point, whatever the collation. Built when the migration runs, not when
 * this module loads: building the table's text took every process ~10 ms of its start (a CPU profile of `svc worker`).
 */
export const postgresLowerFunctions = (): readonly string[] => {
  const capitals = lowercasePairs().filter(([upper]) => upper > 0x7f);
  const letters = capitals.map(([upper]) => String.fromCodePoint(upper)).join('');
  // Spliced into SQL text and a bracket expression: letters only, never a quote, bracket, backslash or dash.
  if (/['"\\[\]^$-]/.test(letters)) throw new Error('the capitals include a character SQL or a regular expression would read');
  const table = JSON.stringify(Object.fromEntries(capitals.map(([u, l]) => [String.fromCodePoint(u), String.fromCodePoint(l)])));
  return [
    // The pieces reach the aggregate in the order the one function scan returns them, the text's order; an ORDER BY
    // on their ordinality would sort them again, 4.5 times the cost (77 against 17 µs for a row of 15 capitals). The
    // test of every code point (test/integration/case-mapping.test.ts) holds the order.
    `create or replace function svc_lower_letters(t text) returns text
language sql immutable strict parallel safe as $fn$
  select string_agg(coalesce('${table}'::jsonb ->> piece, piece), '')
  from regexp_split_to_table(lower(t collate "C"), '(?=[${letters}])|(?<=[${letters}])') as piece
$fn$`,
    // PL/pgSQL, not SQL: the planner would inline a SQL function, putting the argument (`data::jsonb ->> 'f'`, a
    // parse of the record's JSON) in each of the two places that read it; a `~` over 20,000 records took 1.2 to 1.6
    // times as long as with this function, which reads it once.
    `create or replace function svc_lower(t text) returns text
language plpgsql immutable strict parallel safe as $fn$
begin
  if (t collate "C") ~ '[${letters}]' then return svc_lower_letters(t); end if;
  return lower(t collate "C");
end
$fn$`,
  ];
};
