import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Context } from '../../src/context.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, cookieFrom, createTestApp, type TestApp } from '../helpers/app.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import type { OpenApiDoc } from '../helpers/openapi.js';
import { StatementLog } from '../helpers/statement-log.js';

/**
 * The admin OpenAPI document and GET /admin/v1/api/schema are kept for the collections' version (migration 023) and
 * built again when it moves (http/collections-answers.ts). Never stale: a collection created, altered or deleted shows
 * at the very next request, whether it was changed through this app, through another app on the same database (as
 * another process would), or in SQL alone.
 */
describe.each(DIALECTS)('answers built from every collection (%s)', (dialect) => {
  let t: TestApp;
  /** A second app on the same database, its statements recorded: another process. */
  let other: { base: TestContext; app: FastifyInstance; log: StatementLog; headers: Record<string, string>; violations: string[] };

  beforeEach(async () => {
    t = await createTestApp(dialect);
    const base = await createTestContext(dialect, { SVC_SECRET_KEY: t.ctx.config.secretKey! }, { database: t.database });
    const log = new StatementLog();
    const ctx: Context = { ...base.ctx, database: { ...base.ctx.database, db: base.ctx.database.db.withPlugin(log) } };
    const violations: string[] = [];
    const app = await buildApp(ctx, { responseViolations: violations });
    const login = await app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(login.statusCode).toBe(200);
    other = { base, app, log, violations, headers: { cookie: cookieFrom(login), 'x-svc-csrf': login.json().csrfToken as string } };
  });
  afterEach(async () => {
    await other.app.close();
    await other.base.ctx.database.close();
    expect(other.violations).toEqual([]);
    await t.close();
  });

  /** What both answers of `app` say now: each collection's field names, and the ETags. */
  async function answers(app: FastifyInstance = t.app, headers: Record<string, string> = t.admin.headers) {
    const doc = await app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers });
    const schema = await app.inject({ method: 'GET', url: '/admin/v1/api/schema', headers });
    expect([doc.statusCode, schema.statusCode]).toEqual([200, 200]);
    const records = Object.entries((doc.json() as OpenApiDoc).components.schemas!).filter(([name]) => name.startsWith('Record_'));
    const collections = (schema.json() as { collections: Array<{ name: string; fields: Array<{ name: string; required: boolean }> }> }).collections;
    return {
      document: Object.fromEntries(records.map(([name, s]) => [name.slice('Record_'.length), Object.keys((s as { properties: { data: { properties: object } } }).properties.data.properties)])),
      schema: Object.fromEntries(collections.map((c) => [c.name, c.fields.map((f) => f.name)])),
      required: Object.fromEntries(collections.map((c) => [c.name, c.fields.filter((f) => f.required).map((f) => f.name)])),
      etags: [doc.headers.etag, schema.headers.etag],
    };
  }

  const fields = (...names: string[]) => names.map((name) => ({ name, type: 'text', required: name === 'must' }));

  it('a collection created, altered and deleted through this app shows in both answers at the next request', async () => {
    const empty = await answers();
    expect([empty.document, empty.schema]).toEqual([{}, {}]);
    const steps: Array<[() => Promise<unknown>, Record<string, string[]>]> = [
      [() => t.collection('alpha', fields('a')), { alpha: ['a'] }],
      [() => t.app.inject({ method: 'PATCH', url: '/admin/v1/collections/alpha', headers: t.admin.headers, payload: { fields: fields('a', 'b') } }), { alpha: ['a', 'b'] }],
      [() => t.collection('beta', fields('x')), { alpha: ['a', 'b'], beta: ['x'] }],
      [() => t.app.inject({ method: 'DELETE', url: '/admin/v1/collections/alpha', headers: t.admin.headers }), { beta: ['x'] }],
    ];
    let etags = empty.etags;
    for (const [change, expected] of steps) {
      await change();
      const now = await answers();
      expect([now.document, now.schema]).toEqual([expected, expected]);
      // Each answer's ETag moves with it.
      expect(now.etags.every((e, i) => typeof e === 'string' && e !== etags[i])).toBe(true);
      etags = now.etags;
    }
  });

  it('a collection created, altered and deleted through another app on the same database shows here at the next request', async () => {
    expect((await answers()).schema).toEqual({});
    expect((await answers(other.app, other.headers)).schema).toEqual({});
    const through = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => other.app.inject({ method, url, headers: other.headers, ...(payload ? { payload } : {}) });
    const steps: Array<[() => Promise<{ statusCode: number }>, Record<string, string[]>]> = [
      [() => through('POST', '/admin/v1/collections', { name: 'gamma', fields: fields('g') }), { gamma: ['g'] }],
      [() => through('PATCH', '/admin/v1/collections/gamma', { fields: fields('g', 'h') }), { gamma: ['g', 'h'] }],
      [() => through('DELETE', '/admin/v1/collections/gamma?force=true'), {}],
    ];
    for (const [change, expected] of steps) {
      expect((await change()).statusCode).toBeLessThan(300);
      const here = await answers();
      expect([here.document, here.schema]).toEqual([expected, expected]);
      const there = await answers(other.app, other.headers);
      expect([there.document, there.schema]).toEqual([expected, expected]);
    }
  });

  it('a change made in SQL alone (an older svc, a hand edit) shows at the next request', async () => {
    await t.collection('delta', fields('d'));
    expect((await answers()).required).toEqual({ delta: [] });
    const changed = JSON.stringify([{ name: 'd', type: 'text', required: true, indexed: false }]);
    await sql`update collections set fields = ${changed} where name = 'delta'`.execute(t.ctx.database.db);
    expect((await answers()).required).toEqual({ delta: ['d'] });
    await sql`delete from collections where name = 'delta'`.execute(t.ctx.database.db);
    expect((await answers()).schema).toEqual({});
  });

  it('a repeated request reads one row and sends the kept bytes; If-None-Match answers 304 until a collection changes', async () => {
    await t.collection('epsilon', fields('e', 'must'));
    const get = (url: string, extra: Record<string, string> = {}) => other.app.inject({ method: 'GET', url, headers: { ...other.headers, ...extra } });
    /** The statements `request` ran on the collections and on their version. */
    const reads = async (request: () => Promise<unknown>) => {
      other.log.nodes.length = 0;
      await request();
      const text = other.log.nodes.map((n) => JSON.stringify(n));
      return { collections: text.filter((s) => s.includes('"name":"collections"')).length, version: text.filter((s) => s.includes('"name":"collections_version"')).length };
    };
    for (const url of ['/admin/v1/openapi.json', '/admin/v1/api/schema']) {
      let first!: Awaited<ReturnType<typeof get>>;
      expect(await reads(async () => (first = await get(url)))).toEqual({ collections: 1, version: 1 });
      let again!: Awaited<ReturnType<typeof get>>;
      expect(await reads(async () => (again = await get(url)))).toEqual({ collections: 0, version: 1 });
      expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
      const etag = first.headers.etag as string;
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['content-type']).toBe('application/json; charset=utf-8');

      for (const match of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const unchanged = await get(url, { 'if-none-match': match });
        expect([unchanged.statusCode, unchanged.body, unchanged.headers.etag]).toEqual([304, '', etag]);
      }
      expect((await get(url, { 'if-none-match': '"other"' })).statusCode).toBe(200);
    }

    const etags = [(await get('/admin/v1/openapi.json')).headers.etag as string, (await get('/admin/v1/api/schema')).headers.etag as string];
    await t.collection('zeta', fields('z'));
    for (const [i, url] of ['/admin/v1/openapi.json', '/admin/v1/api/schema'].entries()) {
      const changed = await get(url, { 'if-none-match': etags[i]! });
      expect(changed.statusCode).toBe(200);
      expect(changed.headers.etag).not.toBe(etags[i]);
      expect(changed.body).toContain('zeta');
    }
  });
});
