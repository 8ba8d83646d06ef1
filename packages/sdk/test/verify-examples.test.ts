import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisDedupeStore } from '../src/verify/redis-store.js';
import { OLD_SECRET, SECRET, deliveryId, envelopeBody, signedDelivery, v1 } from './helpers/deliveries.js';
import { connectRedis, deleteKeys, redisUrl, type RedisTestClient } from './helpers/redis.js';
import { ensureVerifyBuilt } from './helpers/sdk-build.js';

interface Receiver {
  url: string;
  close(): Promise<void>;
}

type OnEvent = (envelope: { id: string; topic: string }) => unknown;
type Options = {
  secret?: string;
  secrets?: string[];
  onEvent: OnEvent;
  maxBodyBytes?: number;
  inProgressTtlSeconds?: number;
  store?: unknown;
};

const receivers: Record<string, (options: Options) => Promise<Receiver>> = {
  'node:http': async (options) => {
    // @ts-expect-error plain JS example without type declarations
    const { createReceiver } = await import('../../../examples/receiver-node-http.mjs');
    const server = createReceiver(options) as Server;
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/webhooks/svc`,
      close: () => new Promise<void>((ok) => server.close(() => ok())),
    };
  },
  fastify: async (options) => {
    // @ts-expect-error plain JS example without type declarations
    const { createReceiver } = await import('../../../examples/receiver-fastify.mjs');
    const app = createReceiver(options);
    const address: string = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: `${address}/webhooks/svc`, close: () => app.close() };
  },
};

beforeAll(() => ensureVerifyBuilt(), 120_000);

const IN_PROGRESS_TTL_SECONDS = 1;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function opened(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

async function post(url: string, headers: Record<string, string>, body: string | Uint8Array) {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

for (const [name, start] of Object.entries(receivers)) {
  describe(`examples: ${name} receiver over real HTTP`, () => {
    const received: string[] = [];
    let failNext = false;
    // Set by a test to hold the next handler run until it says so.
    let holdNext: Promise<void> | undefined;
    let receiver: Receiver;

    beforeAll(async () => {
      receiver = await start({
        secrets: [SECRET, OLD_SECRET],
        maxBodyBytes: 64 * 1024,
        inProgressTtlSeconds: IN_PROGRESS_TTL_SECONDS,
        onEvent: async (envelope) => {
          if (failNext) {
            failNext = false;
            throw new Error('downstream unavailable');
          }
          const hold = holdNext;
          holdNext = undefined;
          if (hold) await hold;
          received.push(envelope.id);
        },
      });
    });
    afterAll(() => receiver?.close());
    beforeEach(() => {
      received.length = 0;
      holdNext = undefined;
    });

    it('answers 200 to a signed delivery and processes it once; a redelivery is a 200 duplicate', async () => {
      const d = signedDelivery();
      expect(await post(receiver.url, d.headers, d.body)).toEqual({ status: 200, body: { ok: true, duplicate: false } });
      // A retry is signed afresh, with a new timestamp.
      const again = signedDelivery({ id: d.id, body: d.body, timestamp: Math.floor(Date.now() / 1000) + 1 });
      expect(await post(receiver.url, again.headers, again.body)).toEqual({
        status: 200,
        body: { ok: true, duplicate: true },
      });
      expect(received).toEqual([d.id]);
    });

    it('accepts both sides of a rotation', async () => {
      const both = signedDelivery({ secrets: [SECRET, OLD_SECRET] });
      const oldOnly = signedDelivery({ secrets: [OLD_SECRET] });
      expect((await post(receiver.url, both.headers, both.body)).status).toBe(200);
      expect((await post(receiver.url, oldOnly.headers, oldOnly.body)).status).toBe(200);
      expect(received).toEqual([both.id, oldOnly.id]);
    });

    it('answers 401 to unsigned, tampered, wrongly signed and stale deliveries, and processes none', async () => {
      const d = signedDelivery();
      const { 'svc-signature': _, ...unsigned } = d.headers;
      const cases: Array<[Record<string, string>, string, string]> = [
        [unsigned, d.body, 'missing_header'],
        [d.headers, d.body.replace('"version":2', '"version":3'), 'signature_mismatch'],
        [{ ...d.headers, 'svc-signature': v1('whsec_wrong', d.headers['svc-timestamp']!, d.body) }, d.body, 'signature_mismatch'],
      ];
      const stale = signedDelivery({ timestamp: Math.floor(Date.now() / 1000) - 3600 });
      cases.push([stale.headers, stale.body, 'timestamp_stale']);
      for (const [headers, body, code] of cases) {
        expect(await post(receiver.url, headers, body)).toEqual({ status: 401, body: { error: code } });
      }
      expect(received).toEqual([]);
    });

    it('answers 400 to an authentic but unusable delivery', async () => {
      const notEnvelope = signedDelivery({ body: '{"hello":"world"}' });
      expect(await post(receiver.url, notEnvelope.headers, notEnvelope.body)).toEqual({
        status: 400,
        body: { error: 'malformed_body' },
      });
      const d = signedDelivery();
      const swapped = { ...d.headers, 'svc-delivery': deliveryId() };
      expect(await post(receiver.url, swapped, d.body)).toEqual({ status: 400, body: { error: 'id_mismatch' } });
      expect(received).toEqual([]);
    });

    it('answers 500 when processing fails, and the retry processes it', async () => {
      const d = signedDelivery();
      failNext = true;
      expect(await post(receiver.url, d.headers, d.body)).toEqual({ status: 500, body: { error: 'handler_failed' } });
      expect(await post(receiver.url, d.headers, d.body)).toEqual({ status: 200, body: { ok: true, duplicate: false } });
      expect(received).toEqual([d.id]);
    });

    it('answers 409 to a retry that arrives while the first run is still processing, then 200 duplicate', async () => {
      const d = signedDelivery();
      const gate = opened();
      holdNext = gate.promise;
      const first = post(receiver.url, d.headers, d.body);
      await until(() => holdNext === undefined);
      const retry = signedDelivery({ id: d.id, body: d.body });
      expect(await post(receiver.url, retry.headers, retry.body)).toEqual({
        status: 409,
        body: { error: 'delivery_in_progress' },
      });
      expect(received).toEqual([]);
      gate.open();
      expect(await first).toEqual({ status: 200, body: { ok: true, duplicate: false } });
      expect(await post(receiver.url, retry.headers, retry.body)).toEqual({
        status: 200,
        body: { ok: true, duplicate: true },
      });
      expect(received).toEqual([d.id]);
    });

    it('processes a retry once a run that never finished has outlived its in-progress TTL', async () => {
      const d = signedDelivery();
      const hung = opened();
      holdNext = hung.promise;
      const abort = new AbortController();
      const first = fetch(receiver.url, { method: 'POST', headers: d.headers, body: d.body, signal: abort.signal });
      await until(() => holdNext === undefined);
      // svc gave up on the attempt (timeout); the run itself is stuck, as a crashed process would be.
      abort.abort();
      await first.catch(() => {});
      expect((await post(receiver.url, d.headers, d.body)).status).toBe(409);
      await sleep(IN_PROGRESS_TTL_SECONDS * 1000 + 200);
      expect(await post(receiver.url, d.headers, d.body)).toEqual({ status: 200, body: { ok: true, duplicate: false } });
      expect(received).toEqual([d.id]);
      // The stuck run finishing late changes nothing: the delivery stays done, processed by the retry.
      hung.open();
      await until(() => received.length === 2);
      expect(await post(receiver.url, d.headers, d.body)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    });

    it('refuses a body over the size cap with 413', async () => {
      const id = deliveryId();
      const big = signedDelivery({ id, body: envelopeBody(id, { blob: 'x'.repeat(100 * 1024) }) });
      expect((await post(receiver.url, big.headers, big.body)).status).toBe(413);
      expect(received).toEqual([]);
    });
  });
}

describe.skipIf(!redisUrl())('examples: a receiver process killed mid-handler, Redis store shared', () => {
  const prefix = `svc-sdk-test:${process.pid}:${randomBytes(4).toString('hex')}:crash:`;
  let redis: RedisTestClient;
  let child: ChildProcess | undefined;
  let survivor: Receiver | undefined;

  beforeAll(async () => {
    redis = await connectRedis(redisUrl()!);
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await survivor?.close();
    await deleteKeys(redis, prefix);
    await redis?.close();
  });

  it('answers 409 while the dead run’s claim lasts, then the retry is processed by another process', async () => {
    const ttlSeconds = 2;
    child = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/stuck-receiver.mjs', import.meta.url))], {
      env: {
        ...process.env,
        REDIS_URL: redisUrl(),
        KEY_PREFIX: prefix,
        IN_PROGRESS_TTL_SECONDS: String(ttlSeconds),
        SECRET,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = outputLines(child);
    const port = Number((await lines.next(/^port (\d+)$/))[1]);

    const d = signedDelivery();
    const url = `http://127.0.0.1:${port}/webhooks/svc`;
    const attempt = fetch(url, { method: 'POST', headers: d.headers, body: d.body });
    await lines.next(new RegExp(`^handling ${d.id}$`));
    const claimedAt = Date.now();
    child.kill('SIGKILL');
    await expect(attempt).rejects.toThrow();

    const received: string[] = [];
    survivor = await receivers['node:http']!({
      secret: SECRET,
      inProgressTtlSeconds: ttlSeconds,
      store: new RedisDedupeStore(redis, { keyPrefix: prefix }),
      onEvent: (envelope) => void received.push(envelope.id),
    });
    const retry = signedDelivery({ id: d.id, body: d.body });
    expect(await post(survivor.url, retry.headers, retry.body)).toEqual({
      status: 409,
      body: { error: 'delivery_in_progress' },
    });
    await sleep(claimedAt + ttlSeconds * 1000 + 200 - Date.now());
    expect(await post(survivor.url, retry.headers, retry.body)).toEqual({
      status: 200,
      body: { ok: true, duplicate: false },
    });
    expect(await post(survivor.url, retry.headers, retry.body)).toEqual({
      status: 200,
      body: { ok: true, duplicate: true },
    });
    expect(received).toEqual([d.id]);
  });
});

/** Reads a child's stdout line by line; `next(re)` waits for the next line matching `re`. */
function outputLines(child: ChildProcess) {
  const seen: string[] = [];
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    seen.push(...parts);
  });
  return {
    async next(re: RegExp): Promise<RegExpMatchArray> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const index = seen.findIndex((l) => re.test(l));
        if (index >= 0) return seen.splice(0, index + 1).pop()!.match(re)!;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no line ${re} from the child`);
        await sleep(10);
      }
    },
  };
}
