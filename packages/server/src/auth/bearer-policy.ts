import { AppError } from '../errors.js';
import type { ApiToken, Scope } from './api-tokens-store.js';

/**
 * What an API token may do on the public API (SPEC §3, §7): the one place that decides it. The public routes' hook
 * (http/bearer-auth.ts) asks it with the scope a route needs and the collections its path or query names; a batch asks
 * it for each operation's collection; an event stream asks it again while it runs. Who the token is (401) is decided
 * before, by authenticateBearer; the admin tokens' rule is auth/admin-scopes.ts.
 */

/** What a request asks of a token. */
export interface BearerAsk {
  scope: Scope;
  /** The collections the request names (its path, its query, an operation of a batch); none: the scope alone decides. */
  collections: readonly string[];
  /** Whether a collection exists; asked only about those the answer depends on, in order, and only once each. */
  exists(name: string): boolean | Promise<boolean>;
}

/**
 * How each scope treats the collections a request names. A collection the token may not use and one that does not
 * exist get the same answer, so names cannot be probed. A record route needs the collection itself; the feed keeps a
 * deleted collection's events until retention prunes them, so a collection the token lists is the token's to read
 * whether or not it still exists, and only the name a token of every collection gives must exist.
 */
const COLLECTION_RULES: Record<Scope, { refusal: string; listedMustExist: boolean }> = {
  'records:read': { refusal: 'This token may not use this collection.', listedMustExist: true },
  'records:write': { refusal: 'This token may not use this collection.', listedMustExist: true },
  'events:read': { refusal: 'This token may not read events of that collection.', listedMustExist: false },
};

/** Null when the token may do what the request asks; else the 403 to answer: the scope first, then each collection. */
export async function bearerRefusal(token: ApiToken, ask: BearerAsk): Promise<AppError | null> {
  if (!token.scopes.includes(ask.scope)) return new AppError('forbidden', `This token lacks the ${ask.scope} scope.`);
  const rule = COLLECTION_RULES[ask.scope];
  for (const name of new Set(ask.collections)) {
    const listed = token.collections !== null;
    if (listed && !token.collections!.includes(name)) return new AppError('forbidden', rule.refusal);
    if ((!listed || rule.listedMustExist) && !(await ask.exists(name))) return new AppError('forbidden', rule.refusal);
  }
  return null;
}

/** bearerRefusal, thrown. */
export async function requireBearer(token: ApiToken, ask: BearerAsk): Promise<void> {
  const refusal = await bearerRefusal(token, ask);
  if (refusal) throw refusal;
}

/** SPEC §11: a write's answer carries the record's `data` only to a token that may read records. */
export const showsRecordData = (token: ApiToken): boolean => token.scopes.includes('records:read');
