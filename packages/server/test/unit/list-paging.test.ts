import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeCursor, listJson, pageWithin, readWithin, splicedItemBytes, splicedListBytes } from '../../src/lib/cursor.js';

/** Items whose JSON is a string of the given length; ids sort like record ids. */
const itemsOf = (sizes: number[]) => sizes.map((n, i) => ({ id: `rec_${String(i).padStart(26, '0')}`, json: JSON.stringify('x'.repeat(Math.max(0, n - 2))) }));

describe('pageWithin', () => {
  it('pages fit the byte limit exactly, hold at least one item, and together return every item once', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 2, max: 400 }), { maxLength: 40 }), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 60, max: 1500 }), (sizes, limit, maxBytes) => {
        const all = itemsOf(sizes);
        const seen: string[] = [];
        let start = 0;
        for (let guard = 0; guard <= all.length + 1; guard++) {
          const rows = all.slice(start, start + limit + 1);
          const { items, nextCursor } = pageWithin(rows, limit, maxBytes, (r) => r.id, (r) => Buffer.byteLength(r.json));
          const text = listJson(items.map((r) => r.json), nextCursor);
          expect(JSON.parse(text).items).toHaveLength(items.length);
          if (items.length > 1) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(maxBytes);
          if (rows.length > 0) expect(items.length).toBeGreaterThan(0);
          const next = rows[items.length];
          if (next && items.length < limit) {
            // The next item would not have fitted: the page is as full as the limit allows.
            const fuller = listJson([...items, next].map((r) => r.json), rows[items.length + 1] || all.length > start + items.length + 1 ? encodeCursor(next.id) : null);
            expect(Buffer.byteLength(fuller)).toBeGreaterThan(maxBytes);
          }
          seen.push(...items.map((r) => r.id));
          start += items.length;
          if (nextCursor === null) break;
          expect(nextCursor).toBe(encodeCursor(items.at(-1)!.id));
        }
        expect(seen).toEqual(all.map((r) => r.id));
      }),
    );
  });
});

describe('splicedListBytes', () => {
  const head = (i: number) => `{"id":"rec_${String(i).padStart(26, '0')}","version":${i + 1},"data":`;

  it('is listJson of the items\' texts, byte for byte, for any stored data, cursor and count', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 12 }),
        fc.option(fc.string({ unit: 'grapheme', maxLength: 30 }), { nil: null }),
        fc.option(fc.nat(), { nil: null }),
        (values, cursor, count) => {
          const items = values.map((v, i) => {
            const data = JSON.stringify({ v, text: 'größe 日本 🚀' });
            return { head: head(i), data, dataBytes: Buffer.byteLength(data) };
          });
          const text = listJson(items.map((i) => `${i.head}${i.data}}`), cursor);
          const expected = count === null ? text : `${text.slice(0, -1)},"totalCount":${count}}`;
          const bytes = splicedListBytes(items, cursor, count);
          expect(bytes.equals(Buffer.from(expected))).toBe(true);
          expect(items.reduce((n, i) => n + splicedItemBytes(i), 0) + Math.max(0, items.length - 1)).toBe(Buffer.byteLength(listJson(items.map((i) => `${i.head}${i.data}}`), null)) - listJson([], null).length);
        },
      ),
    );
  });

  it('refuses a head that is not ASCII rather than send a page counted short', () => {
    const data = '{"a":1}';
    expect(() => splicedListBytes([{ head: '{"id":"é","data":', data, dataBytes: Buffer.byteLength(data) }], null)).toThrow(/not ASCII/);
  });
});

describe('readWithin', () => {
  // 1,000 rows of 52 KB, as API tokens naming 1,000 collections each.
  const all = Array.from({ length: 1_000 }, (_, i) => ({ id: `tok_${String(i).padStart(4, '0')}`, body: 'x'.repeat(52_000) }));
  const reader = () => {
    let rowsRead = 0;
    const read = async (after: string | null, n: number) => {
      const from = after === null ? 0 : all.findIndex((r) => r.id === after) + 1;
      const got = all.slice(from, from + n);
      rowsRead += got.length;
      return got;
    };
    return { read, rowsRead: () => rowsRead };
  };
  const bytes = (r: { id: string; body: string }) => JSON.stringify(r).length;
  const opts = { limit: 500, maxBytes: 4 * 1024 * 1024, chunk: 50, key: (r: { id: string }) => r.id, bytes };

  it('stops at the first row the page cannot take, and pages exactly as a read of limit + 1 rows would', async () => {
    const r = reader();
    const rows = await readWithin(r.read, null, opts);
    // 4 MiB holds 80 rows of ~52 KB: the 81st is read and stops it, within the chunk that holds it.
    expect(rows).toHaveLength(81);
    expect(r.rowsRead()).toBe(100);
    expect(pageWithin(rows, 500, opts.maxBytes, (t) => t.id, bytes)).toEqual(pageWithin(all.slice(0, 501), 500, opts.maxBytes, (t) => t.id, bytes));
  });

  it('reads limit + 1 small rows, and fewer at the end', async () => {
    const small = reader();
    const few = { ...opts, maxBytes: Infinity, limit: 120 };
    expect((await readWithin(small.read, null, few)).map((r) => r.id)).toEqual(all.slice(0, 121).map((r) => r.id));
    expect(small.rowsRead()).toBe(121);
    expect((await readWithin(reader().read, 'tok_0990', few)).map((r) => r.id)).toEqual(all.slice(991).map((r) => r.id));
  });
});

