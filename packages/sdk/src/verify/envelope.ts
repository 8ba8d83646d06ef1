import { WebhookVerificationError } from './errors.js';

export type WebhookTopic = 'record.created' | 'record.updated' | 'record.deleted' | 'webhook.test';

/** A record as svc stores it. `version` grows by one with every change: order events by it. */
export interface SvcRecord {
  id: string;
  collection: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  data: Record<string, unknown>;
}

export interface RecordEventPayload {
  record: SvcRecord;
  occurredAt: string;
}

export interface RecordUpdatedPayload extends RecordEventPayload {
  /** The record as it was before this change. */
  previous: SvcRecord;
}

export interface TestEventPayload {
  test: true;
  occurredAt: string;
}

interface EnvelopeBase<T extends WebhookTopic, P> {
  version: '1';
  /** Delivery id (`del_…`), equal to the `Svc-Delivery` header; the key for de-duplication. */
  id: string;
  topic: T;
  collection: string;
  recordId: string;
  payload: P;
}

/**
 * The body of a delivery. Narrow on `topic`. The verifier checks the envelope's own fields, not the payload's:
 * the payload is inside the signature, so it is exactly what svc sent.
 */
export type WebhookEnvelope =
  | EnvelopeBase<'record.created', RecordEventPayload>
  | EnvelopeBase<'record.updated', RecordUpdatedPayload>
  /** Carries the record's last state. */
  | EnvelopeBase<'record.deleted', RecordEventPayload>
  /** Collection `_test`, recordId `rec_00000000000000000000000000`. */
  | EnvelopeBase<'webhook.test', TestEventPayload>;

const decoder = new TextDecoder('utf-8', { fatal: true });

function malformed(detail: string): WebhookVerificationError {
  return new WebhookVerificationError('malformed_body', `delivery body is not a svc envelope: ${detail}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseEnvelope(body: Uint8Array): WebhookEnvelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(body));
  } catch {
    throw malformed('not UTF-8 JSON');
  }
  if (!isObject(parsed)) throw malformed('not a JSON object');
  if (parsed.version !== '1') throw malformed('unsupported envelope version');
  for (const field of ['id', 'topic', 'collection', 'recordId'] as const) {
    if (typeof parsed[field] !== 'string' || parsed[field] === '') throw malformed(`"${field}" is not a string`);
  }
  if (!(parsed.id as string).startsWith('del_')) throw malformed('"id" is not a delivery id');
  if (!isObject(parsed.payload)) throw malformed('"payload" is not an object');
  // Topics svc adds later reach only receivers that subscribe to them, so an unknown topic is not refused here.
  return parsed as unknown as WebhookEnvelope;
}
