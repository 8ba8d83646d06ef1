/**
 * Remembers which deliveries were taken, so a redelivery (svc delivers at least once) is not applied twice.
 * `claim` must be atomic: of any number of concurrent callers with the same id, exactly one gets true,
 * and later callers get false until the claim expires or is released.
 */
export interface DedupeStore {
  claim(id: string, ttlSeconds: number): Promise<boolean>;
  /** Forgets a claim, so a retry of a delivery whose processing failed can run. */
  release(id: string): Promise<void>;
}

export interface MemoryDedupeStoreOptions {
  /** Milliseconds since the epoch; for tests. */
  clock?: () => number;
  /** How often, at most, a claim sweeps out every expired entry. */
  sweepIntervalMs?: number;
}

/**
 * A `DedupeStore` for one process. Its memory is bounded by the deliveries received within one TTL: expired entries
 * are swept. It forgets everything on restart and is not shared between processes; use a database-backed store
 * (`svc-sdk/verify/postgres`) when either matters.
 */
export class MemoryDedupeStore implements DedupeStore {
  readonly #expiresAt = new Map<string, number>();
  readonly #clock: () => number;
  readonly #sweepIntervalMs: number;
  #nextSweep = 0;

  constructor(options: MemoryDedupeStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
  }

  // Synchronous body: nothing can interleave between the check and the set, which makes it atomic.
  async claim(id: string, ttlSeconds: number): Promise<boolean> {
    const now = this.#clock();
    if (now >= this.#nextSweep) this.sweep(now);
    const expiresAt = this.#expiresAt.get(id);
    if (expiresAt !== undefined && expiresAt > now) return false;
    this.#expiresAt.set(id, now + ttlSeconds * 1000);
    return true;
  }

  async release(id: string): Promise<void> {
    this.#expiresAt.delete(id);
  }

  /** Drops expired entries; claims call it on their own every `sweepIntervalMs`. */
  sweep(now: number = this.#clock()): void {
    for (const [id, expiresAt] of this.#expiresAt) {
      if (expiresAt <= now) this.#expiresAt.delete(id);
    }
    this.#nextSweep = now + this.#sweepIntervalMs;
  }

  /** Entries held, expired ones not yet swept included. */
  get size(): number {
    return this.#expiresAt.size;
  }
}
