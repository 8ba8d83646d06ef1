import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers/server.js';
// The generator's own transform, so the test and `npm run generate` cannot disagree on an option.
import { normalizeSource, OUTPUT, typesFromDocument } from '../scripts/generate-types.mjs';

describe('the committed client types match what svc publishes', () => {
  let s: TestServer;
  let document: Record<string, unknown>;

  beforeAll(async () => {
    s = await startTestServer({ dialect: 'sqlite', worker: false });
    const response = await fetch(`${s.baseUrl}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    document = (await response.json()) as Record<string, unknown>;
  });
  afterAll(async () => s?.close());

  it('src/client/openapi.ts is what the generator makes of /api/v1/openapi.json (else: npm run generate -w packages/sdk)', async () => {
    const fresh = await typesFromDocument(document);
    const committed = readFileSync(OUTPUT, 'utf8');
    expect(normalizeSource(committed)).toBe(normalizeSource(fresh));
  });

  it('the output does not depend on the origin that served the document', async () => {
    expect(document.servers).toEqual([{ url: s.baseUrl }]);
    const elsewhere = { ...document, servers: [{ url: 'https://svc.example.com' }] };
    expect(await typesFromDocument(elsewhere)).toBe(await typesFromDocument(document));
  });

  it('the record routes the client calls are in the document', () => {
    const paths = Object.keys(document.paths as object);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/v1/capabilities',
        '/api/v1/openapi.json',
        '/api/v1/collections/{collection}/records',
        '/api/v1/collections/{collection}/records/{id}',
      ]),
    );
  });
});
