import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientTestServer, type ClientTestServer } from './helpers/client-server.js';
// The generator's own transform, so the test and `npm run generate` cannot disagree on an option.
import { DOCUMENTS, normalizeSource, typesFromDocument } from '../scripts/generate-types.mjs';

describe('the committed admin client types match what svc publishes', () => {
  let s: ClientTestServer;
  let document: Record<string, unknown>;

  beforeAll(async () => {
    // No collections, as the generator's own svc has none: the document's webhooks section names them.
    s = await startClientTestServer({ dialect: 'sqlite', collections: {} });
    const response = await s.admin('GET', '/admin/v1/openapi.json');
    expect(response.status).toBe(200);
    document = (await response.json()) as Record<string, unknown>;
  }, 120_000);
  afterAll(async () => s?.close());

  it('src/client/admin-openapi.ts is what the generator makes of /admin/v1/openapi.json (else: npm run generate -w packages/sdk)', async () => {
    const fresh = await typesFromDocument(document, 'admin');
    const committed = readFileSync(DOCUMENTS.admin.output, 'utf8');
    expect(normalizeSource(committed)).toBe(normalizeSource(fresh));
  });

  it('the output does not depend on the origin that served the document', async () => {
    expect(document.servers).toEqual([{ url: s.baseUrl }]);
    const elsewhere = { ...document, servers: [{ url: 'https://svc.example.com' }] };
    expect(await typesFromDocument(elsewhere, 'admin')).toBe(await typesFromDocument(document, 'admin'));
  });

  it('names its own document and drift test in its header, not the public ones', async () => {
    const source = await typesFromDocument(document, 'admin');
    expect(source).toMatch(/^\/\*\*\n \* Generated from svc's own \/admin\/v1\/openapi\.json/);
    expect(source).toContain('test/admin-client-drift.test.ts fails');
    expect(source).not.toMatch(/127\.0\.0\.1|localhost/);
  });

  it('the routes the admin client calls are in the document, each open to an admin token', () => {
    const paths = document.paths as Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
    const called = {
      '/admin/v1/collections': ['get', 'post'],
      '/admin/v1/collections/{name}': ['get', 'patch', 'delete'],
      '/admin/v1/webhooks': ['get', 'post'],
      '/admin/v1/webhooks/{id}': ['get', 'patch', 'delete'],
      '/admin/v1/webhooks/{id}/rotate-secret': ['post'],
      '/admin/v1/webhooks/{id}/test': ['post'],
      '/admin/v1/webhooks/{id}/stats': ['get'],
      '/admin/v1/webhooks/stats': ['get'],
      '/admin/v1/webhooks/{id}/recover': ['post'],
      '/admin/v1/webhooks/{id}/replay': ['post'],
      '/admin/v1/deliveries': ['get'],
      '/admin/v1/deliveries/{id}': ['get'],
      '/admin/v1/deliveries/{id}/retry': ['post'],
      '/admin/v1/deliveries/retry': ['post'],
      '/admin/v1/openapi.json': ['get'],
    };
    for (const [path, methods] of Object.entries(called)) {
      for (const method of methods) {
        const security = paths[path]?.[method]?.security;
        expect(security, `${method.toUpperCase()} ${path}`).toEqual(expect.arrayContaining([{ adminToken: [expect.stringMatching(/^admin:/)] }]));
      }
    }
  });
});
