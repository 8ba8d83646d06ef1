import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisDedupeStore } from '../src/verify/redis-store.js';
import { connectRedis, deleteKeys, redisUrl, type RedisTestClient } from './helpers/redis.js';
import { describeStoreContract } from './helpers/store-contract.js';

const url = redisUrl();
// A prefix per run: concurrent runs never see each other's keys, and cleaning up touches nothing else.
const prefix = `svc-sdk-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe.skipIf(!url)('RedisDedupeStore (real Redis)', () => {
  describeStoreContract('RedisDedupeStore', async () => {
    // Several connections, so the races are decided by the server and not by one connection's queue.
    const clients = await Promise.all(Array.from({ length: 5 }, () => connectRedis(url!)));
    const stores = clients.map((c) => new RedisDedupeStore(c, { keyPrefix: `${prefix}contract:` }));
    return {
      store: stores[0]!,
      racers: stores,
      wait: sleep,
      close: async () => {
        await deleteKeys(clients[0]!, prefix);
        await Promise.all(clients.map((c) => c.close()));
      },
    };
  });

  describe('keys and clients', () => {
    let client: RedisTestClient;

    beforeAll(async () => {
      client = await connectRedis(url!);
    });
    afterAll(async () => {
      await deleteKeys(client, prefix);
      await client?.close();
    });

    it('keeps one key per id under the prefix, expiring with the state it holds', async () => {
      const store = new RedisDedupeStore(client, { keyPrefix: `${prefix}keys:` });
      expect(await store.claim('del_a', 'token-a', 60)).toBe('claimed');
      expect(await client.get(`${prefix}keys:del_a`)).toBe('in_progress:token-a');
      const inProgressTtl = await client.pTTL(`${prefix}keys:del_a`);
      expect(inProgressTtl).toBeGreaterThan(59_000);
      expect(inProgressTtl).toBeLessThanOrEqual(60_000);
      expect(await store.complete('del_a', 'token-a', 3 * 86_400)).toBe(true);
      expect(await client.get(`${prefix}keys:del_a`)).toBe('done');
      expect(await client.pTTL(`${prefix}keys:del_a`)).toBeGreaterThan(3 * 86_400_000 - 5_000);
      expect(await store.release('del_a', 'token-a')).toBe(false);
      expect(await deleteKeys(client, `${prefix}keys:`)).toBe(1);
    });

    it('uses svc:webhook-delivery: by default', async () => {
      const store = new RedisDedupeStore(client);
      const id = `del_${prefix.replace(/[^a-z0-9]/gi, '_')}default`;
      try {
        expect(await store.claim(id, 'token', 60)).toBe('claimed');
        expect(await client.exists(`svc:webhook-delivery:${id}`)).toBe(1);
      } finally {
        await client.del(`svc:webhook-delivery:${id}`);
      }
    });

    it('works through a one-line adapter for a client with call(name, ...args) (ioredis style)', async () => {
      const callStyle = {
        call: (name: string, ...args: string[]) => client.sendCommand([name, ...args]),
      };
      const store = new RedisDedupeStore(
        { sendCommand: ([name, ...args]) => callStyle.call(name!, ...args) },
        { keyPrefix: `${prefix}adapter:` },
      );
      expect(await store.claim('del_a', 't', 60)).toBe('claimed');
      expect(await store.complete('del_a', 't', 60)).toBe(true);
      expect(await store.claim('del_a', 'u', 60)).toBe('done');
    });

    it('refuses a client without sendCommand', () => {
      expect(() => new RedisDedupeStore({} as never)).toThrow(TypeError);
    });
  });
});
