import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';

/**
 * The new setup token replaces every unused one: at most one setup link is valid at a time. Run inside one
 * transaction; on PostgreSQL the delete waits for a redemption that holds the old token's row, and then skips it
 * (it is used), so a redemption either completes before the new link exists or finds its token gone.
 */
export async function replaceSetupToken(db: Kysely<Tables>, tokenHash: string, expiresAt: number): Promise<void> {
  await db.deleteFrom('setup_tokens').where('used_at', 'is', null).execute();
  await db.insertInto('setup_tokens').values({ token_hash: tokenHash, expires_at: expiresAt, used_at: null }).execute();
}

/** Marks the token used if it is unused and unexpired; true when this caller won it (the row lock decides). */
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
