import { createHmac, randomBytes } from 'node:crypto';

export const SECRET = 'whsec_test_6hD2mQk9ZpX4vLr8sT1wYb3nC7eF0aGj';
export const OLD_SECRET = 'whsec_test_old_Qm4Rt8Vx2Zc6Bn0Lk3Hj7Gf5Ds9Aa1Pp';

export function deliveryId(): string {
  return `del_${randomBytes(12).toString('hex')}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** An envelope body as svc serializes it: compact JSON, svc's key order. */
export function envelopeBody(id = deliveryId(), data: Record<string, unknown> = { title: 'Crème brûlée ✓' }): string {
  const record = {
    id: 'rec_01JH0000000000000000000001',
    collection: 'issues',
    version: 2,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:05.000Z',
    data,
  };
  return JSON.stringify({
    version: '1',
    id,
    topic: 'record.updated',
    collection: 'issues',
    recordId: record.id,
    payload: { record, previous: { ...record, version: 1, data: {} }, occurredAt: record.updatedAt },
  });
}

/** `v1=<hex>` computed with node:crypto, independently of the SDK. */
export function v1(secret: string, timestamp: string | number, body: string | Uint8Array): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  return `v1=${mac}`;
}

export interface SignedDelivery {
  id: string;
  body: string;
  headers: Record<string, string>;
}

export function signedDelivery(
  options: { secrets?: string[]; timestamp?: number; id?: string; body?: string } = {},
): SignedDelivery {
  const id = options.id ?? deliveryId();
  const body = options.body ?? envelopeBody(id);
  const timestamp = options.timestamp ?? nowSeconds();
  const secrets = options.secrets ?? [SECRET];
  return {
    id,
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'svc-webhooks/1',
      'svc-delivery': id,
      'svc-timestamp': String(timestamp),
      'svc-signature': secrets.map((s) => v1(s, timestamp, body)).join(' '),
    },
  };
}
