/**
 * At most `capacity` entries, the least recently used dropped first, for caches read on every request (prepared
 * statements, checked queries). A hit leaves the map alone and stamps its entry: moving the entry to the end instead
 * (delete, then set) leaves a deleted slot behind each time, and a Map copies its table into a new one when such
 * slots fill it. The cache lives as long as the process, so each copy was promoted with it and left in the old
 * generation as garbage: most of what svc's heap grew by under W1's reads (bench/README, twenty-third session). A
 * miss on a full cache scans for the oldest stamp, beside the work (a prepare, a parse) that a miss costs anyway.
 */
export class LruCache<K, V> {
  private readonly entries = new Map<K, { value: V; used: number }>();
  /** Stamps stay small integers (no boxed number per hit): at 2^30 they are renumbered in order from 1. */
  private clock = 0;

  constructor(private readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`an LRU cache holds at least one entry, not ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    entry.used = this.tick();
    return entry.value;
  }

  set(key: K, value: V): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      entry.value = value;
      entry.used = this.tick();
      return;
    }
    if (this.entries.size >= this.capacity) this.dropOldest();
    this.entries.set(key, { value, used: this.tick() });
  }

  /** The cached value, or `make()`'s, kept (a value of `undefined` cannot be told from none: never cache one). */
  getOrSet(key: K, make: () => V): V {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = make();
    this.set(key, value);
    return value;
  }

  private dropOldest(): void {
    let oldest: K | undefined;
    let at = Infinity;
    for (const [key, entry] of this.entries) {
      if (entry.used < at) {
        at = entry.used;
        oldest = key;
      }
    }
    this.entries.delete(oldest!);
  }

  private tick(): number {
    if (this.clock >= 2 ** 30) {
      const order = [...this.entries.values()].sort((a, b) => a.used - b.used);
      order.forEach((entry, i) => (entry.used = i + 1));
      this.clock = order.length;
    }
    return ++this.clock;
  }
}
