import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as client from '../src/client/index.js';
import { ensureClientBuilt } from './helpers/sdk-build.js';

const sdkRoot = new URL('../', import.meta.url);
const readme = readFileSync(new URL('README.md', sdkRoot), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('package.json', sdkRoot), 'utf8')) as {
  scripts: Record<string, string>;
  exports: Record<string, { types: string; default: string }>;
};

describe('svc-sdk (the client) as a package', () => {
  beforeAll(() => ensureClientBuilt(), 120_000);

  it('resolves `svc-sdk` to the built client with the same runtime exports as the sources', async () => {
    expect(pkg.exports['.']).toEqual({ types: './dist/client/index.d.ts', default: './dist/client/index.js' });
    const built = (await import('svc-sdk')) as Record<string, unknown>;
    expect(Object.keys(built).sort()).toEqual(Object.keys(client).sort());
    expect(typeof built.createClient).toBe('function');
  });

  it('the README names every runtime export', () => {
    const section = readme.slice(readme.indexOf('## Client'));
    for (const name of Object.keys(client)) expect(section, name).toContain(`\`${name}\``);
  });

  it('generating the types is a separate script, never part of the build', () => {
    expect(pkg.scripts.generate).toBe('node scripts/generate-types.mjs');
    expect(pkg.scripts.build).not.toMatch(/generate/);
    const generated = readFileSync(fileURLToPath(new URL('src/client/openapi.ts', sdkRoot)), 'utf8');
    expect(generated).toMatch(/^\/\*\*\n \* Generated from svc's own \/api\/v1\/openapi\.json/);
    expect(generated).not.toMatch(/127\.0\.0\.1|localhost/);
  });
});
