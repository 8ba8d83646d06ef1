import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * SVC_LIST_MAX_BYTES: a page stops before its JSON would exceed the limit, holds at least one item, and its
 * nextCursor continues right after its last item, so paging still returns every item exactly once.
 */
const MAX = 65_536;

describe.each(DIALECTS)('list pages bounded by SVC_LIST_MAX_BYTES (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;

  beforeEach(async () => {
    t = await createTestApp(dialect, { SVC_LIST_MAX_BYTES: String(MAX) }, { resolver: async () => [{ address: '93.184.215.14', family: 4 }] });
    await t.collection('docs', [{ name: 'body', type: 'text' }]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterEach(async () => t.close());

  const create = async (body: string) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/docs/records', headers: auth, payload: { data: { body } } });
    expect(res.statusCode).toBe(201);
    return res.json().id as string;
  };

  /** Follows nextCursor to the end; every page must fit and hold at least one item. */
  async function pageAll(app: TestApp, url: string, headers: Record<string, string>): Promise<{ ids: string[]; sizes: number[] }> {
    const ids: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const res = await app.app.inject({ method: 'GET', url: `${url}${url.includes('?') ? '&' : '?'}limit=500${cursor ? `&cursor=${cursor}` : ''}`, headers });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { items: Array<{ id: string }>; nextCursor: string | null };
      sizes.push(Buffer.byteLength(res.body));
      ids.push(...body.items.map((i) => i.id));
      cursor = body.nextCursor;
      if (cursor === null) return { ids, sizes };
      expect(body.items.length).toBeGreaterThan(0);
    }
    throw new Error('paging did not end');
  }

  it('the public and the admin record lists stop before the limit and page through every record once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(await create(`${i}`.repeat(20_000)));
    for (const [url, headers] of [['/api/v1/collections/docs/records', auth], ['/admin/v1/collections/docs/records', t.admin.headers]] as const) {
      const { ids: seen, sizes } = await pageAll(t, url, headers);
      expect(seen).toEqual(ids);
      expect(sizes.length).toBeGreaterThan(1);
      for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX);
      // Each page is as full as the limit allows: one more record (20,000 bytes and its frame) would not have fitted.
      for (const size of sizes.slice(0, -1)) expect(size).toBeGreaterThan(MAX - 20_200);
    }
  });

  it('a record larger than the limit comes alone on its page, and paging goes on after it', async () => {
    const small = await create('a');
    const big = await create('b'.repeat(MAX + 1000));
    const after = await create('c');
    const first = await t.app.inject({ method: 'GET', url: '/api/v1/collections/docs/records?limit=500', headers: auth });
    expect(first.json().items.map((r: { id: string }) => r.id)).toEqual([small]);
    const second = await t.app.inject({ method: 'GET', url: `/api/v1/collections/docs/records?limit=500&cursor=${first.json().nextCursor}`, headers: auth });
    expect(second.json().items.map((r: { id: string }) => r.id)).toEqual([big]);
    expect(second.json().items[0].data.body).toHaveLength(MAX + 1000);
    const third = await t.app.inject({ method: 'GET', url: `/api/v1/collections/docs/records?limit=500&cursor=${second.json().nextCursor}`, headers: auth });
    expect(third.json()).toEqual({ items: [expect.objectContaining({ id: after })], nextCursor: null });
  });

  it('a page with its totalCount stays within the limit too', async () => {
    const ids = [await create('a'.repeat(20_000)), await create('b'.repeat(20_000)), await create('c'.repeat(20_000))];
    const url = '/api/v1/collections/docs/records?sort=-body&limit=3';
    const bytesOf = async (u: string) => Buffer.byteLength((await t.app.inject({ method: 'GET', url: u, headers: auth })).body);
    // The third record grown until the page of three (no count) is exactly the limit.
    const grow = MAX - (await bytesOf(url));
    const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/docs/records/${ids[0]}`, headers: auth, payload: { data: { body: 'a'.repeat(20_000 + grow) } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await bytesOf(url)).toBe(MAX);
    const counted = await t.app.inject({ method: 'GET', url: `${url}&count=true`, headers: auth });
    expect(counted.statusCode, counted.body).toBe(200);
    expect(Buffer.byteLength(counted.body)).toBeLessThanOrEqual(MAX);
    const body = counted.json() as { items: unknown[]; nextCursor: string | null; totalCount: number };
    expect(body.totalCount).toBe(3);
    expect(body.items).toHaveLength(2);
    expect(body.nextCursor).not.toBeNull();
  });

  it('a limit reached exactly by count keeps the usual nextCursor rules', async () => {
    const ids = [await create('x'), await create('y')];
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/collections/docs/records?limit=1', headers: auth });
    expect(res.json().items.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    expect(res.json().nextCursor).not.toBeNull();
    const all = await t.app.inject({ method: 'GET', url: '/api/v1/collections/docs/records?limit=2', headers: auth });
    expect(all.json().nextCursor).toBeNull();
  });

  it('the admin token, webhook and delivery lists stop before the limit too', async () => {
    const tight = await createTestApp(dialect, { SVC_LIST_MAX_BYTES: '1024' }, { resolver: async () => [{ address: '93.184.215.14', family: 4 }] });
    try {
      const admin = async (method: string, url: string, payload?: object) => {
        const res = await tight.app.inject({ method: method as 'GET', url, headers: tight.admin.headers, payload });
        expect(res.statusCode, res.body).toBeLessThan(300);
        return res.json();
      };
      // About 330 bytes per token, 600 per target, 330 per job: two, one and two of them fit in 1,024 bytes.
      const tokens: string[] = [];
      for (let i = 0; i < 5; i++) tokens.push((await admin('POST', '/admin/v1/tokens', { name: 'n'.repeat(200), scopes: ['records:read'], collections: null })).id);
      const hooks: string[] = [];
      for (let i = 0; i < 3; i++) hooks.push((await admin('POST', '/admin/v1/webhooks', { name: 'hook', url: `https://hooks.example.com/${'p'.repeat(300)}`, topics: ['webhook.test'] })).id);
      const jobs: string[] = [];
      for (let i = 0; i < 5; i++) jobs.push((await admin('POST', `/admin/v1/webhooks/${hooks[0]}/test`)).deliveryId);

      const lists: Array<[string, string[]]> = [['/admin/v1/tokens', tokens], ['/admin/v1/webhooks', hooks], ['/admin/v1/deliveries', [...jobs].reverse()]];
      for (const [url, expected] of lists) {
        const { ids, sizes } = await pageAll(tight, url, tight.admin.headers);
        expect(ids, url).toEqual(expected);
        expect(sizes.length, url).toBeGreaterThanOrEqual(3);
        for (const size of sizes) expect(size, url).toBeLessThanOrEqual(1024);
      }
    } finally {
      await tight.close();
    }
  });

  it('capabilities name the limit in force', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/capabilities' });
    expect(res.json().limits.listMaxBytes).toBe(MAX);
  });
});
