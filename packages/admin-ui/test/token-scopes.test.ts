/**
 * The admin UI's token form offers the scopes the server accepts, read from the admin OpenAPI document
 * (src/token-scopes.ts), never from a copy: this test fails when the two could differ. The browser test
 * (ui.test.ts) checks the same on the page itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPES } from '../../server/src/auth/admin-scopes.js';
import { SCOPES } from '../../server/src/auth/api-tokens-store.js';
import { createTestApp, type TestApp } from '../../server/test/helpers/app.js';
import { scopesFromDocument } from '../src/token-scopes.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : []));
}

describe('token scopes in the admin UI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  it("are the server's scopes, as the admin OpenAPI document states them", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers: t.admin.headers });
    expect(res.statusCode).toBe(200);
    expect([...scopesFromDocument(res.json())].sort()).toEqual([...SCOPES].sort());
  });

  it("offers admin tokens the server's admin scopes, read from POST /admin/v1/admin-tokens's schema", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers: t.admin.headers });
    expect([...scopesFromDocument(res.json(), '/admin/v1/admin-tokens')].sort()).toEqual([...ADMIN_SCOPES].sort());
  });

  it('every scope the form offers is accepted by the server (a token with each alone is created)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers: t.admin.headers });
    for (const scope of scopesFromDocument(res.json())) {
      const made = await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: t.admin.headers, payload: { name: scope, scopes: [scope], collections: null } });
      expect(made.statusCode, scope).toBe(201);
    }
  });

  it('reads enum, const and $ref forms of the schema, and refuses a document without scopes', () => {
    const doc = (items: object, components = {}) => ({
      paths: { '/admin/v1/tokens': { post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Body' } } } } } } },
      components: { schemas: { Body: { type: 'object', properties: { scopes: { type: 'array', items } } }, ...components } },
    });
    expect(scopesFromDocument(doc({ enum: ['a:read', 'b:write'] }))).toEqual(['a:read', 'b:write']);
    expect(scopesFromDocument(doc({ anyOf: [{ const: 'a:read' }, { type: 'string', enum: ['b:write'] }] }))).toEqual(['a:read', 'b:write']);
    expect(scopesFromDocument(doc({ $ref: '#/components/schemas/Scope' }, { Scope: { oneOf: [{ const: 'c:read' }] } }))).toEqual(['c:read']);
    expect(() => scopesFromDocument(doc({ type: 'string' }))).toThrow(/no token scopes/);
    expect(() => scopesFromDocument({})).toThrow(/no token scopes/);
  });

  it('are not written into the UI by hand anywhere', () => {
    for (const file of sources(SRC)) {
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      for (const scope of [...SCOPES, ...ADMIN_SCOPES]) expect(code.includes(`'${scope}'`) || code.includes(`"${scope}"`), `${file} names ${scope}`).toBe(false);
    }
  });
});
