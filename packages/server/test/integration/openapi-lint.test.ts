import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BaseResolver, createConfig, lint } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { openApiDocuments, operationsOf, type OpenApiDoc } from '../helpers/openapi.js';

// Generated clients name their methods after operationId: camelCase verb + noun, such as listRecords.
const OPERATION_ID = /^[a-z]+[A-Z][A-Za-z0-9]*$/;

/** Nothing the linter reads may come from the network: a remote $ref fails the test instead of being fetched. */
const offline = new BaseResolver({
  http: {
    headers: [],
    customFetch: (url: string) => {
      throw new Error(`the OpenAPI lint must not fetch ${url}`);
    },
  },
});

describe.each(DIALECTS)('OpenAPI documents: operation ids and redocly lint (%s)', (dialect) => {
  let t: TestApp;
  let docs: { public: OpenApiDoc; admin: OpenApiDoc };
  let dir: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', [
      { name: 'title', type: 'text', required: true },
      { name: 'points', type: 'integer' },
      { name: 'due', type: 'datetime' },
    ]);
    await t.collection('notes', [{ name: 'body', type: 'json', required: true }, { name: 'pinned', type: 'boolean' }, { name: 'weight', type: 'number' }]);
    docs = await openApiDocuments(t);
    dir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it('every operation has a camelCase operationId, unique in its document; route ones unique across both', () => {
    const all = [...operationsOf(docs.public), ...operationsOf(docs.admin)];
    expect(all.length).toBeGreaterThan(30);
    // The message names each route left without one (other branches add routes: this is what catches them).
    expect(all.filter((o) => !o.operation.operationId).map((o) => `${o.name} has no operationId`)).toEqual([]);
    expect(all.filter((o) => !OPERATION_ID.test(o.operation.operationId!)).map((o) => `${o.name}: ${o.operation.operationId}`)).toEqual([]);
    // The webhooks section is the same in both documents; a route's id names one route wherever it appears.
    const routes = all.filter((o) => !o.name.includes(' webhook '));
    for (const ops of [operationsOf(docs.public), operationsOf(docs.admin), routes]) {
      const seen = new Map<string, string>();
      const duplicates = ops.flatMap((o) => {
        const other = seen.get(o.operation.operationId!);
        seen.set(o.operation.operationId!, o.name);
        return other ? [`${o.operation.operationId} names both ${other} and ${o.name}`] : [];
      });
      expect(duplicates).toEqual([]);
    }
  });

  it('every documented route is in one of the two documents', () => {
    const full = t.app.swagger() as unknown as OpenApiDoc;
    const outside = Object.keys(full.paths).filter((p) => !p.startsWith('/api/v1/') && !p.startsWith('/admin/v1/'));
    expect(outside).toEqual([]);
    expect(Object.keys(docs.public.paths).length + Object.keys(docs.admin.paths).length).toBe(Object.keys(full.paths).length);
  });

  const lintReport = async (name: string, doc: OpenApiDoc): Promise<string[]> => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lint({ ref: file, config, externalRefResolver: offline });
    return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`);
  };

  it.each(['public', 'admin'] as const)('the %s document passes redocly lint (recommended): no errors, no warnings', async (which) => {
    expect(await lintReport(which, docs[which])).toEqual([]);
  });

  it('the admin document passes with no collection and with one (its webhooks section is shaped differently)', async () => {
    const other = await createTestApp(dialect);
    try {
      expect(await lintReport('admin-none', (await openApiDocuments(other)).admin)).toEqual([]);
      await other.collection('only', [{ name: 'x', type: 'text' }]);
      expect(await lintReport('admin-one', (await openApiDocuments(other)).admin)).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
