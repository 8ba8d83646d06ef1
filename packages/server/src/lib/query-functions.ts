/**
 * The few value functions the filter language needs, identical wherever a filter is evaluated: in JavaScript (webhook
 * subscriptions), as SQLite user functions, and mirrored by PostgreSQL's `svc_instant` (instantKey, migration 009)
 * and `svc_lower` (simpleLowercase, migration 013).
 */

/** `~`/`!~` fold case by svc's one table (case-mapping.ts), whichever of these places evaluates them. */
export { simpleLowercase } from './case-mapping.js';

/** Orders texts by Unicode code point (JavaScript's `<` orders UTF-16 units, which differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (D800–DFFF) starts a code point above U+FFFF: it sorts after every unit from E000 to FFFF.
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy) return sx ? (y >= 0xe000 ? 1 : x - y) : x >= 0xe000 ? -1 : x - y;
    return x - y;
  }
  return a.length - b.length;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
/** Keeps every key non-negative (year 0000 at −23:59), so fixed-width keys order as their numbers do. */
const SHIFT_SECONDS = 62167305600;

/** Days from 1970-01-01 to the given date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = year - (month <= 2 ? 1 : 0) + 400;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468 - 146097;
}

/**
 * An RFC 3339 date-time as a text that orders as its instant does: shifted Unix seconds (12 digits), a dot, and the
 * fraction to nanoseconds (9 digits). Exact: no rounding to milliseconds or microseconds. Null for other texts.
 */
export function instantKey(text: string): string | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const n = (i: number) => Number(m[i]);
  const offset = m[8] === undefined ? 0 : (m[8] === '-' ? -1 : 1) * (n(9) * 3600 + n(10) * 60);
  const seconds = daysFromCivil(n(1), n(2), n(3)) * 86400 + n(4) * 3600 + n(5) * 60 + n(6) - offset + SHIFT_SECONDS;
  return `${String(seconds).padStart(12, '0')}.${(m[7] ?? '').padEnd(9, '0')}`;
}

/** The SQL mirror of instantKey for PostgreSQL (returns numeric; same order). Created by migration 009. */
export const POSTGRES_INSTANT_FUNCTION = `
create or replace function svc_instant(t text) returns numeric
language sql immutable strict parallel safe as $fn$
  select (d.days * 86400 + d.hh * 3600 + d.mi * 60 + d.ss - d.sg * (d.oh * 3600 + d.om * 60) + ${SHIFT_SECONDS})::numeric
         + ('0.' || rpad(d.fr, 9, '0'))::numeric
  from (
    select (b.era * 146097 + b.yoe * 365 + b.yoe / 4 - b.yoe / 100
            + (153 * (b.mo + case when b.mo > 2 then -3 else 9 end) + 2) / 5 + b.dd - 1 - 719468 - 146097)::bigint as days,
           b.hh, b.mi, b.ss, b.sg, b.oh, b.om, b.fr
    from (
      select a.y / 400 as era, a.y - (a.y / 400) * 400 as yoe, a.mo, a.dd, a.hh, a.mi, a.ss, a.sg, a.oh, a.om, a.fr
      from (
        select substr(t, 1, 4)::int - case when substr(t, 6, 2)::int <= 2 then 1 else 0 end + 400 as y,
               substr(t, 6, 2)::int as mo, substr(t, 9, 2)::int as dd,
               substr(t, 12, 2)::int as hh, substr(t, 15, 2)::int as mi, substr(t, 18, 2)::int as ss,
               coalesce(substring(t from '^.{19}\\.([0-9]+)'), '') as fr,
               case when upper(right(t, 1)) = 'Z' then 0 when substr(right(t, 6), 1, 1) = '-' then -1 else 1 end as sg,
               case when upper(right(t, 1)) = 'Z' then 0 else substr(right(t, 5), 1, 2)::int end as oh,
               case when upper(right(t, 1)) = 'Z' then 0 else substr(right(t, 2), 1, 2)::int end as om
      ) a
    ) b
  ) d
$fn$`;
