import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DEDUPE_TTL_SECONDS,
  MemoryDedupeStore,
  WebhookVerificationError,
  handleDelivery,
  type DedupeStore,
} from '../src/verify/index.js';
import { SECRET, signedDelivery } from './helpers/deliveries.js';

function fakeClock(start = 1_000_000) {
  let now = start;
  return { clock: () => now, advance: (ms: number) => (now += ms) };
}

describe('MemoryDedupeStore', () => {
  it('claims an id once until it expires', async () => {
    const t = fakeClock();
    const store = new MemoryDedupeStore({ clock: t.clock });
    expect(await store.claim('del_a', 10)).toBe(true);
    expect(await store.claim('del_a', 10)).toBe(false);
    expect(await store.claim('del_b', 10)).toBe(true);
    t.advance(9_999);
    expect(await store.claim('del_a', 10)).toBe(false);
    t.advance(1);
    expect(await store.claim('del_a', 10)).toBe(true);
    expect(await store.claim('del_a', 10)).toBe(false);
  });

  it('gives exactly one of many concurrent claims', async () => {
    const store = new MemoryDedupeStore();
    const results = await Promise.all(Array.from({ length: 100 }, () => store.claim('del_same', 60)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('release allows a new claim', async () => {
    const store = new MemoryDedupeStore();
    expect(await store.claim('del_a', 60)).toBe(true);
    await store.release('del_a');
    expect(await store.claim('del_a', 60)).toBe(true);
    await store.release('del_unknown');
  });

  it('sweeps expired entries, so memory is bounded by one TTL of traffic', async () => {
    const t = fakeClock();
    const store = new MemoryDedupeStore({ clock: t.clock, sweepIntervalMs: 1_000 });
    for (let i = 0; i < 500; i++) await store.claim(`del_${i}`, 1);
    expect(store.size).toBe(500);
    t.advance(1_000);
    await store.claim('del_fresh', 60);
    expect(store.size).toBe(1);
    t.advance(500);
    for (let i = 0; i < 10; i++) await store.claim(`del_more_${i}`, 1);
    expect(store.size).toBe(11);
    store.sweep(t.clock() + 1_000);
    expect(store.size).toBe(1);
  });
});

describe('handleDelivery', () => {
  it('runs the handler once per delivery id and reports duplicates', async () => {
    const store = new MemoryDedupeStore();
    const d = signedDelivery();
    const seen: string[] = [];
    const options = { secret: SECRET, headers: d.headers, rawBody: d.body, store };
    const first = await handleDelivery(options, (e) => {
      seen.push(e.id);
      return 'done';
    });
    expect(first).toMatchObject({ duplicate: false, result: 'done', envelope: { id: d.id } });
    const second = await handleDelivery(options, () => expect.fail('must not run twice'));
    expect(second).toMatchObject({ duplicate: true, envelope: { id: d.id } });
    expect(seen).toEqual([d.id]);
  });

  it('claims with the default TTL of three days, or the one given', async () => {
    const ttls: number[] = [];
    const store: DedupeStore = {
      claim: async (_id, ttl) => (ttls.push(ttl), true),
      release: async () => {},
    };
    const d = signedDelivery();
    await handleDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body, store }, () => {});
    await handleDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body, store, ttlSeconds: 60 }, () => {});
    expect(ttls).toEqual([DEFAULT_DEDUPE_TTL_SECONDS, 60]);
    expect(DEFAULT_DEDUPE_TTL_SECONDS).toBe(259_200);
  });

  it('releases the claim and rethrows when the handler fails, so a retry runs it again', async () => {
    const store = new MemoryDedupeStore();
    const d = signedDelivery();
    const options = { secret: SECRET, headers: d.headers, rawBody: d.body, store };
    const boom = new Error('boom');
    await expect(handleDelivery(options, async () => Promise.reject(boom))).rejects.toBe(boom);
    const retry = await handleDelivery(options, () => 'second time');
    expect(retry).toMatchObject({ duplicate: false, result: 'second time' });
  });

  it('reports both errors when the release fails too', async () => {
    const store: DedupeStore = {
      claim: async () => true,
      release: async () => Promise.reject(new Error('db down')),
    };
    const d = signedDelivery();
    const error = await handleDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body, store }, () => {
      throw new Error('boom');
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors.map((e: Error) => e.message)).toEqual(['boom', 'db down']);
  });

  it('claims nothing when verification fails', async () => {
    const store = new MemoryDedupeStore();
    const d = signedDelivery();
    await expect(
      handleDelivery({ secret: 'whsec_wrong', headers: d.headers, rawBody: d.body, store }, () => {}),
    ).rejects.toBeInstanceOf(WebhookVerificationError);
    expect(store.size).toBe(0);
  });
});
