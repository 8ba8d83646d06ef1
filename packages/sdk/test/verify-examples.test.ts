import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OLD_SECRET, SECRET, deliveryId, envelopeBody, signedDelivery, v1 } from './helpers/deliveries.js';
import { ensureVerifyBuilt } from './helpers/sdk-build.js';

interface Receiver {
  url: string;
  close(): Promise<void>;
}

type OnEvent = (envelope: { id: string; topic: string }) => unknown;
type Options = { secret?: string; secrets?: string[]; onEvent: OnEvent; maxBodyBytes?: number };

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

async function post(url: string, headers: Record<string, string>, body: string | Uint8Array) {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

for (const [name, start] of Object.entries(receivers)) {
  describe(`examples: ${name} receiver over real HTTP`, () => {
    const received: string[] = [];
    let failNext = false;
    let receiver: Receiver;

    beforeAll(async () => {
      receiver = await start({
        secrets: [SECRET, OLD_SECRET],
        maxBodyBytes: 64 * 1024,
        onEvent: (envelope) => {
          if (failNext) {
            failNext = false;
            throw new Error('downstream unavailable');
          }
          received.push(envelope.id);
        },
      });
    });
    afterAll(() => receiver?.close());
    beforeEach(() => {
      received.length = 0;
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

    it('refuses a body over the size cap with 413', async () => {
      const id = deliveryId();
      const big = signedDelivery({ id, body: envelopeBody(id, { blob: 'x'.repeat(100 * 1024) }) });
      expect((await post(receiver.url, big.headers, big.body)).status).toBe(413);
      expect(received).toEqual([]);
    });
  });
}
