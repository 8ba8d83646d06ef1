import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingHttpHeaders } from 'node:http';
import { deliveryClientOptions } from '../../src/runtime.js';
import { createDeliveryClient } from '../../src/webhooks/http-client.js';
import type { Clock } from '../../src/lib/clock.js';
import { DeliveryWorker } from '../../src/webhooks/worker/worker.js';
import type { Resolver } from '../../src/webhooks/destination-guard.js';
import { createTestApp, type TestApp } from './app.js';
import type { Dialect } from './db.js';
import { startHttpsReceiver, type HttpsReceiver } from './https-receiver.js';

/**
 * The receiver side of the seed's scheme, written independently of svc's signing code: every `v1=` entry is
 * an HMAC-SHA256 of `<timestamp>.<raw body>` under one of the secrets.
 */
export function signatureValid(headers: IncomingHttpHeaders, body: string, secrets: string[]): boolean {
  const ts = String(headers['svc-timestamp'] ?? '');
  const entries = String(headers['svc-signature'] ?? '').split(' ');
  return entries.some((entry) => {
    if (!entry.startsWith('v1=')) return false;
    const got = Buffer.from(entry.slice(3), 'hex');
    return secrets.some((secret) => {
      const want = createHmac('sha256', secret).update(`${ts}.${body}`).digest();
      return got.length === want.length && timingSafeEqual(got, want);
    });
  });
}

export interface DeliveryRig extends TestApp {
  receiver: HttpsReceiver;
  worker: DeliveryWorker;
  auth: Record<string, string>;
  /** Registers a webhook target through the admin API; returns its id and secret. */
  target(topics?: string[], url?: string): Promise<{ id: string; secret: string }>;
  createRecord(data: Record<string, unknown>): Promise<{ id: string; version: number }>;
  job(id: string): Promise<any>;
  admin(method: string, url: string, payload?: unknown): Promise<{ statusCode: number; json(): any }>;
}

/** An app, a worker in the same process (as `svc serve` runs them) and a real HTTPS receiver on loopback. */
export async function createDeliveryRig(
  dialect: Dialect,
  env: Record<string, string> = {},
  options: { resolver?: Resolver; startWorker?: boolean; clock?: Clock; random?: () => number } = {},
): Promise<DeliveryRig> {
  const receiver = await startHttpsReceiver();
  const { createTestDatabase } = await import('./db.js');
  const database = await createTestDatabase(dialect);
  const caFile = join(database.dir, 'receiver-ca.pem');
  writeFileSync(caFile, receiver.ca);
  let client: ReturnType<typeof createDeliveryClient> | null = null;
  let worker: DeliveryWorker | null = null;
  const t = await createTestApp(
    dialect,
    {
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: caFile,
      SVC_WEBHOOK_RETRY_SCHEDULE: '0s,50ms,50ms',
      SVC_WEBHOOK_POLL_MS: '50',
      SVC_WEBHOOK_TIMEOUT_MS: '2000',
      ...env,
    },
    {
      database,
      resolver: options.resolver,
      clock: options.clock,
      handoff: (ctx) => {
        client = createDeliveryClient(deliveryClientOptions(ctx.config, ctx.resolver));
        return (worker = new DeliveryWorker(ctx, client, null, options.random));
      },
    },
  );
  if (!worker || !client) throw new Error('the app was built without its worker');
  if (options.startWorker !== false) await worker.start();
  await t.collection('issues', [{ name: 'title', type: 'text', required: true }]);
  const auth = { authorization: `Bearer ${await t.token()}` };
  const admin = (method: string, url: string, payload?: unknown) =>
    t.app.inject({ method: method as 'GET', url, headers: t.admin.headers, payload: payload as object });
  return {
    ...t,
    receiver,
    worker,
    auth,
    admin,
    async target(topics = ['record.created', 'record.updated', 'record.deleted'], url = `${receiver.url}/hook`) {
      const res = await admin('POST', '/admin/v1/webhooks', { name: 'receiver', url, topics });
      if (res.statusCode !== 201) throw new Error(`target: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async createRecord(data) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: auth, payload: { data } });
      if (res.statusCode !== 201) throw new Error(`record: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async job(id) {
      return (await admin('GET', `/admin/v1/deliveries/${id}`)).json();
    },
    close: async () => {
      await worker!.stop(1000);
      await client!.close();
      await receiver.close();
      await t.close();
    },
  };
}
