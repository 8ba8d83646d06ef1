import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ATTEMPT_ERRORS, ERRORS } from '../../src/errors.js';

describe('error catalogue', () => {
  it('docs/errors.md lists every code with its status, and nothing else', async () => {
    const doc = await readFile(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');
    const main = doc.split('## Delivery attempt error codes')[0]!;
    const rows = [...main.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    const expected = Object.entries(ERRORS).map(([code, e]) => [code, e.status]);
    expect(rows.sort()).toEqual(expected.sort());
  });

  it('lists every delivery attempt error code, and nothing else', async () => {
    const doc = await readFile(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');
    const attempts = doc.split('## Delivery attempt error codes')[1]!.split('\n## ')[0]!;
    const codes = [...attempts.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect(codes.sort()).toEqual(Object.keys(ATTEMPT_ERRORS).sort());
  });
});
