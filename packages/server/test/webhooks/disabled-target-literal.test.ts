import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import type { Resolver } from '../../src/webhooks/destination-guard.js';

// SPEC §11: a target saved disabled skips only the DNS look-up; an address written literally in its URL (in any form
// the URL parser turns into one) is judged like an enabled target's.
const LITERALS = [
  'https://127.0.0.1/hook',
  'https://[::1]/',
  'https://[::ffff:127.0.0.1]/',
  'https://2130706433/', // decimal: new URL gives 127.0.0.1
  'https://0x7f000001/', // hex: 127.0.0.1
  'https://0x7f.1/', // shortened hex: 127.0.0.1
  'https://169.254.169.254/latest/meta-data',
  'https://10.0.0.1/',
];

describe.each(DIALECTS)('disabled targets and literal addresses (%s)', (dialect) => {
  let t: TestApp;
  let lookups: string[];
  // Records every look-up, so "no DNS for a disabled target" is observed rather than assumed.
  const resolver: Resolver = async (host) => {
    lookups.push(host);
    return [{ address: '93.184.216.34', family: 4 }];
  };
  afterEach(async () => t.close());

  const create = (url: string, enabled = false) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'x', url, topics: ['record.created'], enabled } });

  it('refuses a disabled target whose URL names a forbidden address literally', async () => {
    lookups = [];
    t = await createTestApp(dialect, {}, { resolver });
    for (const url of LITERALS) {
      const res = await create(url);
      expect(res.statusCode, url).toBe(422);
      const body = res.json() as { code: string; errors: Array<{ path: string }> };
      expect(body.code, url).toBe('destination_refused');
      expect(body.errors[0]?.path, url).toBe('/url');
    }
    const list = (await t.app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: t.admin.headers })).json() as { items: unknown[] };
    expect(list.items).toHaveLength(0);
    expect(lookups).toEqual([]);
  });

  it('refuses a forbidden literal on PATCH of a disabled target, and saves a name without a look-up', async () => {
    lookups = [];
    t = await createTestApp(dialect, {}, { resolver });
    const created = await create('https://internal.example/hook');
    expect(created.statusCode).toBe(201);
    expect(lookups).toEqual([]);
    const id = (created.json() as { id: string }).id;
    for (const url of LITERALS) {
      const res = await t.app.inject({ method: 'PATCH', url: `/admin/v1/webhooks/${id}`, headers: t.admin.headers, payload: { url } });
      expect(res.statusCode, url).toBe(422);
      expect((res.json() as { code: string }).code, url).toBe('destination_refused');
    }
    const renamed = await t.app.inject({ method: 'PATCH', url: `/admin/v1/webhooks/${id}`, headers: t.admin.headers, payload: { url: 'https://other.example/hook' } });
    expect(renamed.statusCode).toBe(200);
    expect(lookups).toEqual([]);
  });

  it('saves a disabled target with a public literal, or a literal the allow list permits', async () => {
    lookups = [];
    t = await createTestApp(dialect, { SVC_WEBHOOK_ALLOW_CIDRS: '10.0.0.0/8' }, { resolver });
    expect((await create('https://93.184.216.34/hook')).statusCode).toBe(201);
    expect((await create('https://10.1.2.3/hook')).statusCode).toBe(201);
    expect((await create('https://127.0.0.1/hook')).statusCode).toBe(422);
  });
});
