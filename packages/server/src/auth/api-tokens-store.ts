import { CompiledQuery, type Kysely } from 'kysely';
import { sqlOnce } from '../db/compiled.js';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { ApiTokensTable, Tables } from '../db/tables.js';
import { toCollection, type Collection } from '../records/collections-store.js';

/** events:read reveals record data as records:read does (the feed carries it). */
export type Scope = 'records:read' | 'records:write' | 'events:read';
export const SCOPES: readonly Scope[] = ['records:read', 'records:write', 'events:read'];

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

/** The token's columns, then the collection's (null when there is no such collection), as the statement names them. */
type TokenCollectionRow = readonly [
  id: string,
  name: string,
  tokenHash: string,
  scopes: string,
  collections: string | null,
  createdAt: number,
  lastUsedAt: number | null,
  collectionName: string | null,
  fields: string | null,
  collectionCreatedAt: number | null,
  collectionUpdatedAt: number | null,
];

/**
 * The token with this hash and, in the same statement, the collection a request names. No row: no such token.
 * A row whose collection is null: the token exists but the collection does not.
 */
export async function findApiTokenWithCollection(
  db: Kysely<Tables>,
  caps: DialectCapabilities,
  tokenHash: string,
  collection: string,
): Promise<{ token: ApiToken; collection: Collection | null } | null> {
  // Every record request runs this: built once (sqlOnce), its row an array (caps.arrayRows). Parameters: the join's
  // collection name, then the hash.
  const text = sqlOnce(db, 'token-with-collection', (d) =>
    d
      .selectFrom('api_tokens as t')
      .leftJoin('collections as c', (join) => join.on('c.name', '=', ''))
      .select(['t.id', 't.name', 't.token_hash', 't.scopes', 't.collections', 't.created_at', 't.last_used_at'])
      .select(['c.name as c_name', 'c.fields as c_fields', 'c.created_at as c_created_at', 'c.updated_at as c_updated_at'])
      .where('t.token_hash', '=', ''),
  );
  const row = (await caps.arrayRows<TokenCollectionRow>(db, CompiledQuery.raw(text, [collection, tokenHash])))[0];
  if (!row) return null;
  const [id, name, token_hash, scopes, collections, created_at, last_used_at, cName, cFields, cCreatedAt, cUpdatedAt] = row;
  const found = cName === null ? null : toCollection({ name: cName, fields: cFields!, created_at: cCreatedAt!, updated_at: cUpdatedAt! });
  return { token: toToken({ id, name, token_hash, scopes, collections, created_at, last_used_at }), collection: found };
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
