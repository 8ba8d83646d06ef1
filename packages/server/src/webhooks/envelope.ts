import type { Topic } from './topics.js';

export interface EventInput {
  topic: Topic;
  collection: string;
  recordId: string;
  payload: Record<string, unknown>;
  /**
   * Record events: whether a target's `filter` holds for this change (SPEC §9). The records layer, which knows the
   * collection's fields, gives it; a record event without one matches no filtered target.
   */
  filterJudge?: (filter: string) => boolean;
}

/** What a job row holds of its envelope; the payload is the event's (stored once for all its jobs). */
export interface EnvelopeParts {
  id: string;
  topic: string;
  collection: string;
  record_id: string;
}

/**
 * The exact bytes of a delivery body, in the seed's field order, from the job and its event's payload as stored
 * JSON text. The same text as JSON.stringify of the whole envelope, so every attempt of a job sends the same bytes.
 */
export const envelopeOf = (job: EnvelopeParts, payloadJson: string): string => `${envelopeHead(job)}${payloadJson}}`;

/** envelopeOf's bytes, UTF-8, made in one buffer from the payload as stored (its bytes, or its text). */
export function envelopeBytes(job: EnvelopeParts, payloadJson: Buffer | string): Buffer {
  const head = envelopeHead(job);
  const headBytes = Buffer.byteLength(head);
  const payloadBytes = typeof payloadJson === 'string' ? Buffer.byteLength(payloadJson) : payloadJson.length;
  const out = Buffer.allocUnsafe(headBytes + payloadBytes + 1);
  out.write(head, 0);
  if (typeof payloadJson === 'string') out.write(payloadJson, headBytes);
  else payloadJson.copy(out, headBytes);
  out[out.length - 1] = 0x7d; // the closing brace
  return out;
}

const envelopeHead = (job: EnvelopeParts): string =>
  `{"version":"1","id":${JSON.stringify(job.id)},"topic":${JSON.stringify(job.topic)},"collection":${JSON.stringify(job.collection)},"recordId":${JSON.stringify(job.record_id)},"payload":`;

/** The envelope of a new delivery of `e`. */
export const envelopeBody = (deliveryId: string, e: EventInput): string =>
  envelopeOf({ id: deliveryId, topic: e.topic, collection: e.collection, record_id: e.recordId }, JSON.stringify(e.payload));

/** The topic of an envelope built by envelopeOf (its third member, always in that place). */
export function envelopeTopic(body: Buffer | string): string {
  // The topic is within the first few hundred bytes (the version, an id of svc's and a topic name before it).
  const start = typeof body === 'string' ? body : body.toString('utf8', 0, Math.min(body.length, 512));
  const m = /^\{"version":"1","id":"[^"]*","topic":"([^"]*)"/.exec(start);
  return m ? m[1]! : '';
}
