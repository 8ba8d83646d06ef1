import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * A suite that loops over a filtered dialect list registers nothing when the list comes out empty (no PostgreSQL on a
 * newcomer's machine), and vitest fails such a file: the README's `npm test` went red so. Per-dialect tests say
 * `it.runIf(dialect === …)` inside `describe.each(DIALECTS)` instead, which registers a skipped test.
 */
describe('test suite shape', () => {
  const files = ['server', 'sdk', 'admin-ui'].flatMap((p) => testFiles(join(ROOT, p, 'test')));

  it('finds the test files', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it('never loops over a dialect list that can come out empty', () => {
    const offenders = files.filter((f) => /describe\.each\(\s*DIALECTS\s*\.\s*filter/.test(readFileSync(f, 'utf8'))).map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });
});
