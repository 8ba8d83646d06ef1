import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Facts that have one home in the source, which the import graph (.dependency-cruiser.cjs) cannot see because a copy
 * would import nothing new: read from the text of every source file instead.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(path);
    return d.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every `file:line` under src/ whose line matches, outside `home` (a folder under src/) and the migrations. */
function outside(home: string, pattern: RegExp): string[] {
  const found: string[] = [];
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path).split('\\').join('/');
    if (file.startsWith(home) || file.startsWith('db/migrations/')) continue;
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (pattern.test(line)) found.push(`${file}:${i + 1}`);
      });
  }
  return found;
}

/** A write to the events table: Kysely's builders, insertRows' spec, or SQL text. */
const EVENTS_WRITE = /(insertInto|updateTable|deleteFrom)\(\s*'events'\s*\)|\btable:\s*'events'|\b(insert\s+into|update|delete\s+from)\s+events\b/i;
/** A read of the system's time: everything else asks the process's clock (lib/clock.ts), which tests replace. */
const SYSTEM_TIME = /\bDate\.now\(\)|\bnew Date\(\s*\)|\bperformance\.timeOrigin\b/;
/** A decision on what an API or admin token's scopes allow. */
const SCOPE_DECISION = /\bscopes\.(includes|some|every|indexOf)\(/;

describe('one home for each fact', () => {
  it('the patterns catch what they are for, and not reads', () => {
    for (const line of [
      "await trx.updateTable('events').set({ traceparent })",
      "insertRows(trx, { name: 'x', table: 'events', columns })",
      'delete from events where id = ?',
      "db.insertInto('events').values(row)",
    ]) expect(EVENTS_WRITE.test(line), line).toBe(true);
    for (const line of ["db.selectFrom('events')", 'select payload from events e where e.id = ?', "join events e on e.id = v.column1"]) {
      expect(EVENTS_WRITE.test(line), line).toBe(false);
    }
    for (const line of ['const t = Date.now();', "stamp = new Date().toISOString()", 'performance.timeOrigin + performance.now()']) expect(SYSTEM_TIME.test(line), line).toBe(true);
    for (const line of ['new Date(clock.now()).toISOString()', 'new Date(ms)', 'ctx.clock.now()']) expect(SYSTEM_TIME.test(line), line).toBe(false);
    expect(SCOPE_DECISION.test("if (!token.scopes.includes('records:read'))")).toBe(true);
    expect(SCOPE_DECISION.test('scopes: t.scopes,')).toBe(false);
  });

  it('only events/ writes the events table (events/event-write.ts, retention-store.ts)', () => {
    expect(outside('events/', EVENTS_WRITE)).toEqual([]);
  });

  it('only lib/clock.ts reads the system\'s time (issue 28 item 4: time through the clock everywhere)', () => {
    expect(outside('lib/clock.ts', SYSTEM_TIME)).toEqual([]);
  });

  it('only auth/ decides what a token\'s scopes allow (auth/bearer-policy.ts, auth/admin-scopes.ts)', () => {
    expect(outside('auth/', SCOPE_DECISION)).toEqual([]);
  });
});
