import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';

export async function insertSetupToken(db: Kysely<Tables>, tokenHash: string, expiresAt: number): Promise<void> {
  await db.insertInto('setup_tokens').values({ token_hash: tokenHash, expires_at: expiresAt, used_at: null }).execute();
}

/** Marks the token used if it is unused and unexpired; true when this caller won it. */
export async function consumeSetupToken(db: Kysely<Tables>, tokenHash: string, now: number): Promise<boolean> {
  const res = await db
    .updateTable('setup_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
