import { iso } from '../lib/clock.js';
import type { StoredRecord } from '../records/records-store.js';
import type { Topic } from './topics.js';

export interface RecordJson {
  id: string;
  collection: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  data: Record<string, unknown>;
}

export const recordJson = (r: StoredRecord): RecordJson => ({
  id: r.id,
  collection: r.collection,
  version: r.version,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
  data: r.data,
});

export interface EventInput {
  topic: Topic;
  collection: string;
  recordId: string;
  payload: Record<string, unknown>;
}

/** The exact bytes of a delivery body; the field order is the seed's. Computed once per job, never again. */
export const envelopeBody = (deliveryId: string, e: EventInput): string =>
  JSON.stringify({ version: '1', id: deliveryId, topic: e.topic, collection: e.collection, recordId: e.recordId, payload: e.payload });
