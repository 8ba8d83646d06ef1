import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

export interface StoredResponse {
  requestHash: string;
  status: number;
  response: string;
}

export async function findIdempotent(db: Kysely<Tables>, tokenId: string, key: string, now: number): Promise<StoredResponse | null> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'status', 'response'])
    .where('token_id', '=', tokenId)
    .where('key', '=', key)
    .where('created_at', '>', now - IDEMPOTENCY_TTL_MS)
    .executeTakeFirst();
  return row ? { requestHash: row.request_hash, status: row.status, response: row.response } : null;
}

export async function saveIdempotent(db: Kysely<Tables>, tokenId: string, key: string, value: StoredResponse, now: number): Promise<void> {
  // An expired row with the same key is replaced rather than kept forever.
  await db.deleteFrom('idempotency_keys').where('token_id', '=', tokenId).where('key', '=', key).where('created_at', '<=', now - IDEMPOTENCY_TTL_MS).execute();
  await db
    .insertInto('idempotency_keys')
    .values({ token_id: tokenId, key, request_hash: value.requestHash, status: value.status, response: value.response, created_at: now })
    .execute();
}

export async function pruneIdempotencyKeys(db: Kysely<Tables>, now: number): Promise<number> {
  const res = await db.deleteFrom('idempotency_keys').where('created_at', '<=', now - IDEMPOTENCY_TTL_MS).executeTakeFirst();
  return Number(res.numDeletedRows);
}
