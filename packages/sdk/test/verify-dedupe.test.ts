import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DEDUPE_TTL_SECONDS,
  DEFAULT_IN_PROGRESS_TTL_SECONDS,
  MemoryDedupeStore,
  WebhookVerificationError,
  handleDelivery,
  type DedupeStore,
} from '../src/verify/index.js';
import { SECRET, signedDelivery } from './helpers/deliveries.js';
import { describeStoreContract } from './helpers/store-contract.js';

function fakeClock(start = 1_000_000) {
  let now = start;
  return { clock: () => now, advance: (ms: number) => (now += ms) };
}

describeStoreContract('MemoryDedupeStore', async () => {
  const t = fakeClock();
  return { store: new MemoryDedupeStore({ clock: t.clock }), wait: async (ms) => void t.advance(ms) };
});

describe('MemoryDedupeStore', () => {
  it('expires an in-progress claim exactly at its TTL', async () => {
    const t = fakeClock();
    const store = new MemoryDedupeStore({ clock: t.clock });
    expect(await store.claim('del_a', 'a', 10)).toBe('claimed');
    t.advance(9_999);
    expect(await store.claim('del_a', 'b', 10)).toBe('in_progress');
    t.advance(1);
    expect(await store.claim('del_a', 'b', 10)).toBe('claimed');
  });

  it('sweeps expired entries, so memory is bounded by one TTL of traffic', async () => {
    const t = fakeClock();
    const store = new MemoryDedupeStore({ clock: t.clock, sweepIntervalMs: 1_000 });
    for (let i = 0; i < 500; i++) {
      await store.claim(`del_${i}`, 't', 1);
      await store.complete(`del_${i}`, 't', 1);
    }
    expect(store.size).toBe(500);
    t.advance(1_000);
    await store.claim('del_fresh', 't', 60);
    expect(store.size).toBe(1);
    t.advance(500);
    for (let i = 0; i < 10; i++) await store.claim(`del_more_${i}`, 't', 1);
    expect(store.size).toBe(11);
    store.sweep(t.clock() + 1_000);
    expect(store.size).toBe(1);
  });
});

/** A store that records what handleDelivery asks of it, over a real MemoryDedupeStore. */
function recordingStore(inner: DedupeStore = new MemoryDedupeStore()) {
  const calls: Array<[string, ...unknown[]]> = [];
  const store: DedupeStore = {
    claim: (id, token, ttl) => (calls.push(['claim', ttl]), inner.claim(id, token, ttl)),
    complete: (id, token, ttl) => (calls.push(['complete', ttl]), inner.complete(id, token, ttl)),
    release: (id, token) => (calls.push(['release']), inner.release(id, token)),
  };
  return { store, calls };
}

describe('handleDelivery', () => {
  it('runs the handler once per delivery id, marks it done, and reports later copies as duplicates', async () => {
    const { store, calls } = recordingStore();
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
    expect(calls.map((c) => c[0])).toEqual(['claim', 'complete', 'claim']);
  });

  it('refuses a copy that arrives while the first is still running with delivery_in_progress (409)', async () => {
    const store = new MemoryDedupeStore();
    const d = signedDelivery();
    const options = { secret: SECRET, headers: d.headers, rawBody: d.body, store };
    let finish!: () => void;
    const first = handleDelivery(options, () => new Promise<string>((r) => (finish = () => r('first'))));
    await new Promise((r) => setTimeout(r, 10));
    const error = await handleDelivery(options, () => expect.fail('must not run beside the first')).catch((e) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toMatchObject({ code: 'delivery_in_progress', status: 409 });
    finish();
    expect(await first).toMatchObject({ duplicate: false, result: 'first' });
    expect(await handleDelivery(options, () => expect.fail('done already'))).toMatchObject({ duplicate: true });
  });

  it('claims for 60 s and remembers for three days by default, or as configured', async () => {
    const { store, calls } = recordingStore();
    const run = (extra: object) => {
      const d = signedDelivery();
      return handleDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body, store, ...extra }, () => {});
    };
    await run({});
    await run({ inProgressTtlSeconds: 5, doneTtlSeconds: 600 });
    await run({ ttlSeconds: 700 });
    expect(calls).toEqual([
      ['claim', 60],
      ['complete', 259_200],
      ['claim', 5],
      ['complete', 600],
      ['claim', 60],
      ['complete', 700],
    ]);
    expect([DEFAULT_IN_PROGRESS_TTL_SECONDS, DEFAULT_DEDUPE_TTL_SECONDS]).toEqual([60, 259_200]);
  });

  it('releases the claim and rethrows when the handler fails, so a retry runs it again', async () => {
    const { store, calls } = recordingStore();
    const d = signedDelivery();
    const options = { secret: SECRET, headers: d.headers, rawBody: d.body, store };
    const boom = new Error('boom');
    await expect(handleDelivery(options, async () => Promise.reject(boom))).rejects.toBe(boom);
    const retry = await handleDelivery(options, () => 'second time');
    expect(retry).toMatchObject({ duplicate: false, result: 'second time' });
    expect(calls.map((c) => c[0])).toEqual(['claim', 'release', 'claim', 'complete']);
  });

  it('runs the handler again once a crashed run’s claim has expired', async () => {
    const t = fakeClock(Date.now());
    const store = new MemoryDedupeStore({ clock: t.clock });
    const d = signedDelivery();
    const options = { secret: SECRET, headers: d.headers, rawBody: d.body, store, inProgressTtlSeconds: 30 };
    // The crashed run: it claimed and never completed nor released.
    expect(await store.claim(d.id, 'crashed-run', 30)).toBe('claimed');
    await expect(handleDelivery(options, () => expect.fail('still held'))).rejects.toMatchObject({ status: 409 });
    t.advance(30_000);
    expect(await handleDelivery(options, () => 'ran')).toMatchObject({ duplicate: false, result: 'ran' });
  });

  it('reports both errors when the release fails too', async () => {
    const store: DedupeStore = {
      claim: async () => 'claimed',
      complete: async () => true,
      release: async () => Promise.reject(new Error('db down')),
    };
    const d = signedDelivery();
    const error = await handleDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body, store }, () => {
      throw new Error('boom');
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors.map((e: Error) => e.message)).toEqual(['boom', 'db down']);
  });

  it('throws when the success cannot be recorded, naming the delivery, so svc delivers it again', async () => {
    const cause = new Error('db down');
    const store: DedupeStore = {
      claim: async () => 'claimed',
      complete: async () => Promise.reject(cause),
      release: async () => true,
    };
    const d = signedDelivery();
    const error = await handleDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body, store }, () => {}).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(WebhookVerificationError);
    expect((error as Error).message).toContain(d.id);
    expect((error as Error).cause).toBe(cause);
  });

  it('claims nothing when verification fails', async () => {
    const store = new MemoryDedupeStore();
    const d = signedDelivery();
    await expect(
      handleDelivery({ secret: 'whsec_wrong', headers: d.headers, rawBody: d.body, store }, () => {}),
    ).rejects.toBeInstanceOf(WebhookVerificationError);
    expect(store.size).toBe(0);
  });

  it("refuses a store written for 0.1's interface, and TTLs that are not positive, before anything else", async () => {
    const d = signedDelivery();
    const base = { secret: SECRET, headers: d.headers, rawBody: d.body };
    const old = { claim: async () => true, release: async () => {} } as unknown as DedupeStore;
    await expect(handleDelivery({ ...base, store: old }, () => {})).rejects.toThrow(/CHANGELOG/);
    const store = new MemoryDedupeStore();
    for (const bad of [{ inProgressTtlSeconds: 0 }, { doneTtlSeconds: -1 }, { inProgressTtlSeconds: Number.NaN }]) {
      await expect(handleDelivery({ ...base, store, ...bad }, () => {})).rejects.toBeInstanceOf(TypeError);
    }
    expect(store.size).toBe(0);
  });
});
