import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { parseCidrList, type Resolver } from '../../src/webhooks/destination-guard.js';
import { createDeliveryClient } from '../../src/webhooks/http-client.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';

/**
 * A Retry-After date is counted from the process's clock (the one its retries are scheduled by), not from a read of the
 * system time inside the client: on a clock months behind the system's, a date two minutes ahead of it is 120 s.
 */

let receiver: HttpsReceiver;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(async () => receiver.close());

it("counts an HTTP-date Retry-After from the client's clock", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
  const client = createDeliveryClient({ resolver, allow: parseCidrList('127.0.0.0/8'), ca: [receiver.ca], connectionsPerOrigin: 1, timeoutMs: 3_000, clock });
  try {
    receiver.setHandler((_req, res) => res.writeHead(503, { 'retry-after': new Date(clock.now() + 120_000).toUTCString() }).end());
    const first = await client.send({ url: `https://localhost:${receiver.port}/hook`, headers: {}, body: '{}' });
    expect(first).toMatchObject({ kind: 'response', statusCode: 503, retryAfterSeconds: 120 });
    clock.advance(60_000);
    const second = await client.send({ url: `https://localhost:${receiver.port}/hook`, headers: {}, body: '{}' });
    expect(second).toMatchObject({ kind: 'response', statusCode: 503, retryAfterSeconds: 120 });
  } finally {
    await client.close();
  }
});
