import { iso } from '../lib/clock.js';
import type { StoredRecord } from './records-store.js';

/** A record as the API shows it, and as its events carry it. */
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
