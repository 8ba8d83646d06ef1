import { createClient } from 'redis';
import { provided } from '../../../server/test/helpers/required.js';

export type RedisTestClient = ReturnType<typeof createClient>;

/**
 * The Redis to test against: `SVC_TEST_REDIS_URL`, or undefined (the suite is skipped; with SVC_TEST_REQUIRE naming
 * redis, an error instead). CI sets it (`.ci/run` starts a Redis when none answers).
 */
export function redisUrl(): string | undefined {
  return provided('redis', process.env.SVC_TEST_REDIS_URL ?? '') || undefined;
}

export async function connectRedis(url: string): Promise<RedisTestClient> {
  const client = createClient({ url });
  // Without a listener an 'error' event (a dropped connection) would crash the test worker instead of failing a test.
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** Deletes every key under `prefix` and returns how many there were. */
export async function deleteKeys(client: RedisTestClient, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = (await client.sendCommand(['SCAN', cursor, 'MATCH', `${prefix}*`, 'COUNT', '1000'])) as [
      string,
      string[],
    ];
    cursor = next;
    if (keys.length > 0) deleted += Number(await client.sendCommand(['DEL', ...keys]));
  } while (cursor !== '0');
  return deleted;
}
