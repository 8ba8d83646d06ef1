import type { Kysely } from 'kysely';
import type { AdminTokensTable, Tables } from '../db/tables.js';
import type { AdminScope } from './admin-scopes.js';

export interface AdminToken {
  id: string;
  name: string;
  scopes: AdminScope[];
  createdAt: number;
  lastUsedAt: number | null;
  /** The id of the admin whose session created it. */
  createdBy: string;
}

const toAdminToken = (r: AdminTokensTable): AdminToken => ({
  id: r.id,
  name: r.name,
  scopes: JSON.parse(r.scopes) as AdminScope[],
  createdAt: Number(r.created_at),
  lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  createdBy: r.created_by,
});

export async function insertAdminToken(db: Kysely<Tables>, t: AdminToken & { tokenHash: string }): Promise<void> {
  await db
    .insertInto('admin_tokens')
    .values({
      id: t.id,
      name: t.name,
      token_hash: t.tokenHash,
      scopes: JSON.stringify(t.scopes),
      created_at: t.createdAt,
      last_used_at: null,
      created_by: t.createdBy,
    })
    .execute();
}

/** One probe of the unique index on token_hash; no row: no such token (never made, or revoked). */
export async function findAdminTokenByHash(db: Kysely<Tables>, tokenHash: string): Promise<AdminToken | null> {
  const row = await db.selectFrom('admin_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return row ? toAdminToken(row) : null;
}

export async function listAdminTokens(db: Kysely<Tables>, afterId: string | null, limit: number): Promise<AdminToken[]> {
  let q = db.selectFrom('admin_tokens').selectAll().orderBy('id').limit(limit);
  if (afterId) q = q.where('id', '>', afterId);
  return (await q.execute()).map(toAdminToken);
}

/** Revocation is the row's deletion: every process looks the token up on every request, so it ends at once. */
export async function deleteAdminToken(db: Kysely<Tables>, id: string): Promise<boolean> {
  const res = await db.deleteFrom('admin_tokens').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** Guarded so that many concurrent requests with one token write at most once a minute. */
export async function touchAdminToken(db: Kysely<Tables>, id: string, now: number): Promise<void> {
  await db
    .updateTable('admin_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - 60_000)]))
    .execute();
}
