import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareCodePoints as byCodePoint } from '../../src/lib/query-functions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

interface Item { id: string; data: Record<string, string | undefined> }
interface Page { items: Item[]; nextCursor: string | null }

/**
 * SPEC §12 "Bounded cursors": every cursor is at most 1,024 characters whatever the sort values, and paging stays
 * exact (SPEC §8). Sort values of 50 KB, several sharing their first 50 KB, multi-byte and escaped characters.
 */
const LONG = 'Ωé"\\x😀'.repeat(7_200); // 50,400 UTF-16 units, each repeat 5 code points of 1 to 4 bytes

describe.each(DIALECTS)('bounded keyset cursors (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  const made: Item[] = [];
  const create = async (collection: string, data: Record<string, string>) => {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/collections/${collection}/records`, headers: auth, payload: { data } });
    expect(res.statusCode).toBe(201);
    return { id: res.json().id as string, data };
  };
  /** Every page of a query; `between` runs after each page (it may write). Checks every cursor's length. */
  const pageAll = async (collection: string, query: string, limit: number, between: (page: number, last: Item) => Promise<void> = async () => {}) => {
    const seen: Item[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/${collection}/records?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, headers: auth });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      const p = res.json() as Page;
      seen.push(...p.items);
      cursor = p.nextCursor;
      if (cursor === null) return seen;
      expect(cursor.length).toBeLessThanOrEqual(1024);
      await between(page, p.items.at(-1)!);
    }
    throw new Error('more than 100 pages');
  };
  const ids = (items: readonly Item[]) => items.map((i) => i.id);
  const expectedOrder = (items: readonly Item[], field: string, desc: boolean) =>
    [...items].sort((a, b) => {
      const x = a.data[field];
      const y = b.data[field];
      if (x === undefined || y === undefined) return x === y ? (a.id < b.id ? -1 : 1) : x === undefined ? 1 : -1;
      return (desc ? -byCodePoint(x, y) : byCodePoint(x, y)) || (a.id < b.id ? -1 : 1);
    });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.collection('notes', [{ name: 'title', type: 'text' }, { name: 'tag', type: 'text' }]);
    auth = { authorization: `Bearer ${await t.token()}` };
    for (const [title, tag] of [
      [`${LONG}b`, 'x'], [`${LONG}a`, 'y'], [LONG, 'x'], [`${LONG}c`, 'x'], [`${LONG}a`, 'x'], [`zz${LONG}`, 'y'],
      [`${LONG.slice(0, 100)}Z`, 'x'], ['short', 'y'], [undefined, 'x'], [`${LONG}b`, 'y'], [`${LONG}\u{10FFFF}`, 'x'],
    ] as const) {
      made.push(await create('notes', title === undefined ? { tag } : { title, tag }));
    }
  }, 60_000);
  afterAll(async () => t?.close());

  it('pages past 50 KB sort values both ways, each record once and in order, every cursor at most 1,024 characters', async () => {
    for (const limit of [1, 2, 3]) {
      expect(ids(await pageAll('notes', 'sort=title', limit))).toEqual(ids(expectedOrder(made, 'title', false)));
      expect(ids(await pageAll('notes', 'sort=-title', limit))).toEqual(ids(expectedOrder(made, 'title', true)));
    }
    // Two keys, the long one second; a filter with it.
    const twoKeys = await pageAll('notes', 'sort=-tag,title', 2);
    const expected = [...expectedOrder(made.filter((m) => m.data.tag === 'y'), 'title', false), ...expectedOrder(made.filter((m) => m.data.tag === 'x'), 'title', false)];
    expect(ids(twoKeys)).toEqual(ids(expected));
    const filtered = await pageAll('notes', `filter=${encodeURIComponent("title ~ 'Ωé'")}&sort=-title`, 1);
    expect(ids(filtered)).toEqual(ids(expectedOrder(made.filter((m) => m.data.title?.includes('Ωé')), 'title', true)));
  }, 60_000);

  it('stays exact while records with the same long prefix are added between pages', async () => {
    await t.collection('grow', [{ name: 'title', type: 'text' }]);
    const start: Item[] = [];
    for (const s of ['m', 'b', 'y', 'e', 'q', 'c']) start.push(await create('grow', { title: `${LONG}${s}` }));
    for (const desc of [false, true]) {
      let n = 0;
      const seen = await pageAll('grow', `sort=${desc ? '-' : ''}title`, 2, async () => {
        // One that sorts before the page's position, one after.
        await create('grow', { title: `${LONG}a${n}` });
        await create('grow', { title: `${LONG}z${n++}` });
      });
      expect(new Set(ids(seen)).size).toBe(seen.length);
      for (const id of ids(start)) expect(ids(seen)).toContain(id);
    }
  }, 60_000);

  it('when the cursor\'s record changed or went, repeats only records with its prefix and skips none', async () => {
    for (const [desc, change] of [[false, 'patch'], [true, 'patch'], [false, 'delete'], [true, 'delete']] as const) {
      const collection = `moved_${desc ? 'd' : 'a'}_${change}`;
      await t.collection(collection, [{ name: 'title', type: 'text' }]);
      const all: Item[] = [];
      for (const s of ['a', 'b', 'c', 'd', 'e', 'f']) all.push(await create(collection, { title: `${LONG}${s}` }));
      // One before them and one after (Ω is U+03A9, ω U+03C9), so each first page ends on a cut value.
      all.push(await create(collection, { title: 'ωωω' }), await create(collection, { title: 'aaa' }), await create(collection, {}));
      let touched: string | null = null;
      const seen = await pageAll(collection, `sort=${desc ? '-' : ''}title`, 2, async (page, last) => {
        if (page !== 0) return;
        touched = last.id;
        const res = change === 'patch'
          ? await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/${collection}/records/${last.id}`, headers: auth, payload: { data: { title: `${LONG}q` } } })
          : await t.app.inject({ method: 'DELETE', url: `/api/v1/collections/${collection}/records/${last.id}`, headers: auth });
        expect(res.statusCode).toBeLessThan(300);
      });
      expect(all.find((m) => m.id === touched)!.data.title!.startsWith(LONG)).toBe(true);
      for (const m of all) if (m.id !== touched || change === 'patch') expect(ids(seen), `${collection}: ${m.data.title?.slice(-3)}`).toContain(m.id);
      const repeated = ids(seen).filter((id, i) => ids(seen).indexOf(id) !== i);
      for (const id of repeated) expect(all.find((m) => m.id === id)!.data.title!.startsWith(LONG.slice(0, 50))).toBe(true);
    }
  }, 60_000);

  it('refuses a bounded cursor whose cut or digest was altered', async () => {
    const first = (await t.app.inject({ method: 'GET', url: '/api/v1/collections/notes/records?sort=-title&limit=2', headers: auth })).json() as Page;
    const real = JSON.parse(Buffer.from(first.nextCursor!, 'base64url').toString('utf8')) as { after: string; v: unknown[]; q: string; cut: number[]; d: string };
    expect(real.cut).toEqual([0]);
    for (const forged of [{ ...real, d: 'A'.repeat(22) }, { ...real, cut: [] }, { ...real, v: [LONG] }, (({ cut: _c, d: _d, ...rest }) => rest)(real)]) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/notes/records?sort=-title&cursor=${Buffer.from(JSON.stringify(forged)).toString('base64url')}`, headers: auth });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ path: 'cursor' }] });
    }
  });
});
