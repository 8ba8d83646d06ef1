import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import * as admin from '../src/client/admin.js';
import * as client from '../src/client/index.js';
import { ensureClientBuilt } from './helpers/sdk-build.js';

const sdkRoot = new URL('../', import.meta.url);
const readme = readFileSync(new URL('README.md', sdkRoot), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('package.json', sdkRoot), 'utf8')) as {
  exports: Record<string, { types: string; default: string }>;
};

describe('svc-sdk/admin as a package', () => {
  beforeAll(() => ensureClientBuilt(), 120_000);

  it('resolves `svc-sdk/admin` to the built admin client with the same runtime exports as the sources', async () => {
    expect(pkg.exports['./admin']).toEqual({ types: './dist/client/admin.d.ts', default: './dist/client/admin.js' });
    const built = (await import('svc-sdk/admin')) as Record<string, unknown>;
    expect(Object.keys(built).sort()).toEqual(Object.keys(admin).sort());
    expect(typeof built.createAdminClient).toBe('function');
  });

  it('throws the same SvcApiError class as `svc-sdk`, so one catch serves both clients', async () => {
    const [built, publicBuilt] = await Promise.all([import('svc-sdk/admin'), import('svc-sdk')]);
    expect(built.SvcApiError).toBe(publicBuilt.SvcApiError);
  });

  it('stays out of `svc-sdk`: the public entry neither exports nor loads the admin client', () => {
    expect(Object.keys(client)).not.toContain('createAdminClient');
    const entry = readFileSync(new URL('dist/client/index.js', sdkRoot), 'utf8');
    expect(entry).toMatch(/from '\.\/client\.js'/);
    expect(entry).not.toMatch(/from '\.\/admin/);
  });

  it('the README names every runtime export', () => {
    const section = readme.slice(readme.indexOf('## Admin client'));
    for (const name of Object.keys(admin)) expect(section, name).toContain(`\`${name}\``);
  });
});
