import type { Kysely } from 'kysely';
import type { ApiTokensTable, Tables } from '../db/tables.js';

export type Scope = 'records:read' | 'records:write';
export const SCOPES: readonly Scope[] = ['records:read', 'records:write'];

export interface ApiToken {
  id: string;
  name: string;
  scopes: Scope[];
  /** null: every collection. */
  collections: string[] | null;
  createdAt: number;
  lastUsedAt: number | null;
}

const toToken = (r: ApiTokensTable): ApiToken => ({
  id: r.id,
  name: r.name,
  scopes: JSON.parse(r.scopes) as Scope[],
  collections: r.collections === null ? null : (JSON.parse(r.collections) as string[]),
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export async function insertApiToken(db: Kysely<Tables>, t: ApiToken & { tokenHash: string }): Promise<void> {
  await db
    .insertInto('api_tokens')
    .values({
      id: t.id,
      name: t.name,
      token_hash: t.tokenHash,
      scopes: JSON.stringify(t.scopes),
      collections: t.collections === null ? null : JSON.stringify(t.collections),
      created_at: t.createdAt,
      last_used_at: null,
    })
    .execute();
}

export async function findApiTokenByHash(db: Kysely<Tables>, tokenHash: string): Promise<ApiToken | null> {
  const row = await db.selectFrom('api_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return row ? toToken(row) : null;
}

export async function listApiTokens(db: Kysely<Tables>, afterId: string | null, limit: number): Promise<ApiToken[]> {
  let q = db.selectFrom('api_tokens').selectAll().orderBy('id').limit(limit);
  if (afterId) q = q.where('id', '>', afterId);
  return (await q.execute()).map(toToken);
}

export async function deleteApiToken(db: Kysely<Tables>, id: string): Promise<boolean> {
  const res = await db.deleteFrom('api_tokens').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** Guarded so that many concurrent requests with one token write at most once a minute. */
export async function touchApiToken(db: Kysely<Tables>, id: string, now: number): Promise<void> {
  await db
    .updateTable('api_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - 60_000)]))
    .execute();
}
