import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { COLLECTION_NAME } from '../lib/names.js';
import type { Collection } from '../records/collections-store.js';
import { findApiTokenWithCollection, insertApiToken, touchApiToken, type ApiToken, type Scope } from './api-tokens-store.js';

export const TOKEN_PREFIX = 'svc_pat_';

export async function createApiToken(
  ctx: Context,
  input: { name: string; scopes: Scope[]; collections: string[] | null },
): Promise<ApiToken & { token: string }> {
  // The API's schema (routes/admin-tokens.ts) refuses these before they get here; `svc token create` has no schema.
  const refuse = (path: string, message: string, detail: string): never => {
    throw new AppError('validation_failed', detail, { errors: [{ path, message }] });
  };
  const nameLength = [...input.name].length;
  if (nameLength < 1 || nameLength > 200) refuse('/name', 'must be 1 to 200 characters', `The name must be 1 to 200 characters (it has ${nameLength}).`);
  if (input.collections && input.collections.length > 1000) refuse('/collections', 'must have at most 1000 items', 'A token names at most 1000 collections.');
  const bad = input.collections?.findIndex((c) => !COLLECTION_NAME.test(c)) ?? -1;
  if (bad >= 0) {
    const message = `must match pattern "${COLLECTION_NAME.source}"`;
    refuse(`/collections/${bad}`, message, `"${input.collections![bad]}" is not a collection name: it ${message}.`);
  }
  const token = `${TOKEN_PREFIX}${randomToken()}`;
  const now = ctx.clock.now();
  const record: ApiToken = {
    id: newId('tok', now),
    name: input.name,
    scopes: [...new Set(input.scopes)],
    collections: input.collections === null ? null : [...new Set(input.collections)],
    createdAt: now,
    lastUsedAt: null,
  };
  await insertApiToken(ctx.database.db, { ...record, tokenHash: sha256Hex(token) });
  return { ...record, token };
}

/** `collection` is null when the requested collection does not exist; whether the token may use it is not decided here. */
export type BearerResult = { kind: 'missing' } | { kind: 'invalid' } | { kind: 'ok'; token: ApiToken; collection: Collection | null };

/**
 * A token is looked up by its SHA-256, so the comparison is an index probe on a hash: the plaintext is
 * never compared, and timing reveals nothing about stored tokens. The collection the request names comes
 * back from the same statement, saving a second query on every record request.
 */
export async function authenticateBearer(ctx: Context, header: string | undefined, collection: string): Promise<BearerResult> {
  if (header === undefined) return { kind: 'missing' };
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return { kind: 'invalid' };
  const presented = m[1]!;
  if (!presented.startsWith(TOKEN_PREFIX) || presented.length > 200) return { kind: 'invalid' };
  const found = await findApiTokenWithCollection(ctx.database.db, ctx.database.caps, sha256Hex(presented), collection);
  if (!found) return { kind: 'invalid' };
  const { token } = found;
  const now = ctx.clock.now();
  if (token.lastUsedAt === null || now - token.lastUsedAt >= 60_000) {
    await touchApiToken(ctx.database.db, token.id, now);
  }
  return { kind: 'ok', token, collection: found.collection };
}
