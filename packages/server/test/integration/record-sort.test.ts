import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

interface Item { id: string; data: Record<string, unknown> }
interface Page { items: Item[]; nextCursor: string | null; totalCount?: number }

describe.each(DIALECTS)('record sort, keyset cursors, fields and count (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  const list = async (query: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/tasks/records?${query}`, headers: auth });
    return res;
  };
  const create = async (data: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/tasks/records', headers: auth, payload: { data } });
    expect(res.statusCode).toBe(201);
    return (res.json() as Item).id;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.collection('tasks', [
      { name: 'title', type: 'text' }, { name: 'priority', type: 'integer' }, { name: 'done', type: 'boolean' }, { name: 'meta', type: 'json' },
    ]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterAll(async () => t?.close());

  it('sorts with nulls last both ways, false before true, ties by id; projects fields; counts', async () => {
    const a = await create({ title: 'b', priority: 2, done: true });
    const b = await create({ title: 'a', priority: null, done: false });
    const c = await create({ title: 'c', priority: 2 });
    const d = await create({ title: 'B', priority: 5, done: false, meta: { x: 1 } });
    const ids = async (q: string) => ((await list(q)).json() as Page).items.map((i) => i.id);
    expect(await ids('sort=priority')).toEqual([a, c, d, b]);
    expect(await ids('sort=-priority')).toEqual([d, a, c, b]);
    expect(await ids('sort=done,-title')).toEqual([b, d, a, c]);
    expect(await ids('sort=-done,title')).toEqual([a, d, b, c]);
    expect(await ids('sort=title')).toEqual([d, b, a, c]);
    const page = (await list('fields=title,meta&count=true&filter=priority%20%3E%3D%202&sort=-createdAt')).json() as Page;
    expect(page.totalCount).toBe(3);
    expect(page.items.map((i) => i.data)).toEqual([{ title: 'B', meta: { x: 1 } }, { title: 'c' }, { title: 'b' }]);
    expect(page.items[0]).toMatchObject({ id: d, collection: 'tasks', version: 1 });
    const twin = await t.app.inject({ method: 'GET', url: '/admin/v1/collections/tasks/records?filter=priority%20%3E%3D%202&sort=-priority&count=true', headers: t.admin.headers });
    expect(twin.json()).toMatchObject({ items: [{ id: d }, { id: a }, { id: c }], totalCount: 3 });
  });

  it('pages through a sorted, filtered list while records are added: every record that matched throughout, once', async () => {
    for (let i = 0; i < 30; i++) await create({ title: `p${i % 7}`, priority: i % 5, done: i % 2 === 0 });
    const query = `filter=${encodeURIComponent('priority >= 1 && title != "c"')}&sort=-priority,title`;
    const before = ((await list(`${query}&limit=500`)).json() as Page).items.map((i) => i.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let n = 0;
    do {
      const res = await list(`${query}&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const p = res.json() as Page;
      seen.push(...p.items.map((i) => i.id));
      cursor = p.nextCursor;
      await create({ title: `n${n}`, priority: n++ % 6 });
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
  });

  it('refuses a cursor from another filter or sort, and forged ones', async () => {
    const sorted = (await list('sort=-priority&limit=1')).json() as Page;
    const plain = (await list('limit=1')).json() as Page;
    for (const q of [`cursor=${sorted.nextCursor}`, `sort=priority&cursor=${sorted.nextCursor}`, `sort=-priority&cursor=${plain.nextCursor}`,
      `sort=-priority&cursor=${Buffer.from('{"after":"rec_x","v":[1],"q":"zz"}').toString('base64url')}`]) {
      const res = await list(q);
      expect(res.statusCode, q).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ path: 'cursor' }] });
    }
    expect((await list(`sort=-priority&cursor=${sorted.nextCursor}`)).statusCode).toBe(200);
    // A real cursor with its position or members altered, its MAC kept: refused, not a page from elsewhere.
    const real = JSON.parse(Buffer.from(sorted.nextCursor!, 'base64url').toString('utf8')) as { after: string; v: unknown[]; q: string };
    for (const forged of [{ ...real, v: [1e308] }, { ...real, v: [null] }, { ...real, after: `rec_${'0'.repeat(26)}` }, { ...real, x: 1 }]) {
      const res = await list(`sort=-priority&cursor=${Buffer.from(JSON.stringify(forged)).toString('base64url')}`);
      expect(res.statusCode, JSON.stringify(forged)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ path: 'cursor' }] });
    }
  });

  it('refuses bad sort and fields parameters', async () => {
    for (const q of ['sort=meta', 'sort=nope', 'sort=a,b,c,d', 'sort=title,title', 'fields=nope']) {
      const res = await list(q);
      expect(res.statusCode, q).toBe(400);
      expect((res.json() as { code: string }).code).toBe('invalid_query');
    }
  });
  it('keeps a sorted page within SVC_LIST_MAX_BYTES, cursor included, and pages on to every record', async () => {
    const small = await createTestApp(dialect, { SVC_LIST_MAX_BYTES: '2048' });
    try {
      await small.collection('notes', [{ name: 'text', type: 'text' }]);
      const h = { authorization: `Bearer ${await small.token()}` };
      const made: string[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await small.app.inject({ method: 'POST', url: '/api/v1/collections/notes/records', headers: h, payload: { data: { text: `${String(i).padStart(2, '0')}${'é"'.repeat(120)}` } } });
        made.push((res.json() as Item).id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await small.app.inject({ method: 'GET', url: `/api/v1/collections/notes/records?sort=-text&limit=500${cursor ? `&cursor=${cursor}` : ''}`, headers: h });
        expect(res.statusCode).toBe(200);
        expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(2048);
        const p = res.json() as Page;
        seen.push(...p.items.map((i) => i.id));
        cursor = p.nextCursor;
      } while (cursor);
      expect(seen).toEqual([...made].reverse());
    } finally {
      await small.close();
    }
  });
  it('sorts and pages datetime fields as instants, ascending and descending', async () => {
    const other = await createTestApp(dialect);
    try {
      await other.collection('events', [{ name: 'at', type: 'datetime' }]);
      const h = { authorization: `Bearer ${await other.token()}` };
      const times = ['2026-01-01T12:00:00+02:00', '2026-01-01T09:59:59.999999999Z', '2026-01-01T10:00:00.5Z', '2025-12-31T23:00:00-23:00', '2026-01-01T10:00:00Z'];
      const ids: string[] = [];
      for (const at of [...times, null]) {
        const res = await other.app.inject({ method: 'POST', url: '/api/v1/collections/events/records', headers: h, payload: { data: { at } } });
        ids.push((res.json() as Item).id);
      }
      const pageAll = async (sort: string) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const res = await other.app.inject({ method: 'GET', url: `/api/v1/collections/events/records?sort=${sort}&limit=1${cursor ? `&cursor=${cursor}` : ''}`, headers: h });
          expect(res.statusCode, res.body).toBe(200);
          const p = res.json() as Page;
          seen.push(...p.items.map((i) => i.id));
          cursor = p.nextCursor;
        } while (cursor);
        return seen;
      };
      // Instants: [3] 2025-12-31T23:00-23:00 = 2026-01-01T22:00Z is the latest; [0] and [4] are the same instant.
      expect(await pageAll('at')).toEqual([ids[1], ids[0], ids[4], ids[2], ids[3], ids[5]]);
      expect(await pageAll('-at')).toEqual([ids[3], ids[2], ids[0], ids[4], ids[1], ids[5]]);
    } finally {
      await other.close();
    }
  });
});
