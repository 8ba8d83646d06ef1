import type { ClaimOutcome, DedupeStore } from './dedupe-store.js';

export interface MemoryDedupeStoreOptions {
  /** Milliseconds since the epoch; for tests. */
  clock?: () => number;
  /** How often, at most, a claim sweeps out every expired entry. */
  sweepIntervalMs?: number;
}

interface Entry {
  state: 'in_progress' | 'done';
  token: string;
  expiresAt: number;
}

/**
 * A `DedupeStore` for one process. Its memory is bounded by the deliveries received within one done TTL: expired
 * entries are swept. It forgets everything on restart and is not shared between processes; use a shared store
 * (`svc-sdk/verify/redis`, `svc-sdk/verify/postgres`) when either matters.
 *
 * Every method body is synchronous up to its return: nothing interleaves between a read and the write it decides,
 * which is what makes each one atomic.
 */
export class MemoryDedupeStore implements DedupeStore {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: () => number;
  readonly #sweepIntervalMs: number;
  #nextSweep = 0;

  constructor(options: MemoryDedupeStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
  }

  async claim(id: string, token: string, inProgressTtlSeconds: number): Promise<ClaimOutcome> {
    const now = this.#clock();
    if (now >= this.#nextSweep) this.sweep(now);
    const entry = this.#live(id, now);
    if (entry) return entry.state;
    this.#entries.set(id, { state: 'in_progress', token, expiresAt: now + inProgressTtlSeconds * 1000 });
    return 'claimed';
  }

  async complete(id: string, token: string, doneTtlSeconds: number): Promise<boolean> {
    const now = this.#clock();
    const entry = this.#entries.get(id);
    const mine = entry?.state === 'in_progress' && entry.token === token;
    if (!mine && this.#live(id, now)) return false;
    this.#entries.set(id, { state: 'done', token, expiresAt: now + doneTtlSeconds * 1000 });
    return true;
  }

  async release(id: string, token: string): Promise<boolean> {
    const entry = this.#entries.get(id);
    if (entry?.state !== 'in_progress' || entry.token !== token) return false;
    this.#entries.delete(id);
    return true;
  }

  /** Drops expired entries; claims call it on their own every `sweepIntervalMs`. */
  sweep(now: number = this.#clock()): void {
    for (const [id, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(id);
    }
    this.#nextSweep = now + this.#sweepIntervalMs;
  }

  /** Entries held, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  #live(id: string, now: number): Entry | undefined {
    const entry = this.#entries.get(id);
    return entry !== undefined && entry.expiresAt > now ? entry : undefined;
  }
}
