import { describe, expect, it } from 'vitest';
import { LruCache } from '../../src/lib/lru.js';

describe('LruCache', () => {
  it('drops the least recently used entry, a read counting as a use', () => {
    const cache = new LruCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(1); // a is now the most recent; b the oldest
    cache.set('d', 4);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([1, 3, 4]);
    expect(cache.size).toBe(3);
  });

  it('replaces a value in place, which counts as a use', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(10);
    expect(cache.get('b')).toBeUndefined();
  });

  it('makes a missing value once and keeps it', () => {
    const cache = new LruCache<string, { n: number }>(2);
    let made = 0;
    const make = () => ({ n: ++made });
    const first = cache.getOrSet('k', make);
    expect(cache.getOrSet('k', make)).toBe(first);
    expect(made).toBe(1);
  });

  it('keeps the order of use across the renumbering of its stamps', () => {
    const cache = new LruCache<number, number>(4);
    for (let i = 0; i < 4; i++) cache.set(i, i);
    // Reads past 2^30 stamps would take too long; the renumbering is reached by moving the clock.
    (cache as unknown as { clock: number }).clock = 2 ** 30 - 2;
    cache.get(2);
    cache.get(0);
    cache.get(3); // the clock passes 2^30 here: entries renumbered in order of use
    expect((cache as unknown as { clock: number }).clock).toBeLessThan(10);
    cache.get(1);
    cache.set(4, 4); // the oldest is now 2
    expect(cache.get(2)).toBeUndefined();
    expect([0, 1, 3, 4].map((k) => cache.get(k))).toEqual([0, 1, 3, 4]);
  });

  it('leaves the map alone on a hit (no delete and set)', () => {
    const cache = new LruCache<string, number>(8);
    cache.set('a', 1);
    const entries = (cache as unknown as { entries: Map<string, unknown> }).entries;
    const set = entries.set.bind(entries);
    let sets = 0;
    entries.set = (k, v) => {
      sets++;
      return set(k, v);
    };
    for (let i = 0; i < 1000; i++) cache.get('a');
    expect(sets).toBe(0);
  });
});
