import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import type { AdminScope } from './admin-scopes.js';
import { findAdminTokenByHash, insertAdminToken, touchAdminToken, type AdminToken } from './admin-tokens-store.js';
import { forgetLoginAttempt, loginFailures, recordLoginAttempt } from './login-limit-store.js';

export const ADMIN_TOKEN_PREFIX = 'svcadm_';
/** `created_by` of a token `svc admin-token create` made: no session, so no admin id (ids never look like this). */
export const CLI_CREATOR = 'cli';

// The login limit's window (auth/sessions.ts): a wrong admin token spends the same per-address budget as a wrong
// password, SVC_LOGIN_MAX_FAILURES per 15 minutes, so guessing cannot move from one door to the other.
const WINDOW_MS = 15 * 60_000;
// A token is 7 + 43 characters; anything much longer is not one, and is not hashed.
const MAX_TOKEN_LENGTH = 200;

export async function createAdminToken(
  ctx: Context,
  input: { name: string; scopes: AdminScope[]; createdBy: string },
): Promise<AdminToken & { token: string }> {
  const token = `${ADMIN_TOKEN_PREFIX}${randomToken()}`;
  const now = ctx.clock.now();
  const record: AdminToken = { id: newId('adt', now), name: input.name, scopes: [...new Set(input.scopes)], createdAt: now, lastUsedAt: null, createdBy: input.createdBy };
  await insertAdminToken(ctx.database.db, { ...record, tokenHash: sha256Hex(token) });
  return { ...record, token };
}

function limited(oldest: number | null, now: number): AppError {
  const retryAfter = Math.max(1, Math.ceil(((oldest ?? now) + WINDOW_MS - now) / 1000));
  return new AppError('rate_limited', 'Too many failed logins or admin tokens from this address; try again later.', { headers: { 'retry-after': String(retryAfter) } });
}

/**
 * The admin token `presented` (it starts with svcadm_), or null when no such token exists (never made, or revoked:
 * there is no cache, every request reads the table, so a revocation holds at once in every process).
 *
 * Rate-limited as logins are, per client address: an address already at SVC_LOGIN_MAX_FAILURES is refused (429)
 * before any look-up, a valid token included, as the right password is. A wrong token is counted after its look-up
 * and before its answer: of N parallel wrong tokens, the k-th to count sees at least k rows, so at most
 * SVC_LOGIN_MAX_FAILURES of them are answered 401 and the rest 429, across processes too. A valid token costs one
 * read of login_failures (its (key, at) index) and writes nothing there.
 */
export async function authenticateAdminToken(ctx: Context, presented: string, clientAddress: string): Promise<AdminToken | null> {
  const { db } = ctx.database;
  const now = ctx.clock.now();
  const keys = [`ip:${clientAddress}`];
  const max = ctx.config.loginMaxFailures;
  const before = await loginFailures(db, keys, now - WINDOW_MS);
  if (before.count >= max) throw limited(before.oldest, now);
  const token = presented.length <= MAX_TOKEN_LENGTH ? await findAdminTokenByHash(db, sha256Hex(presented)) : null;
  if (token) {
    if (token.lastUsedAt === null || now - token.lastUsedAt >= 60_000) await touchAdminToken(db, token.id, now);
    return token;
  }
  const attempt = await recordLoginAttempt(db, keys, now);
  const after = await loginFailures(db, keys, now - WINDOW_MS);
  if (after.count > max) {
    // Answered 429, not 401: forgotten as a refused login is, so refusals do not push the window further out.
    await forgetLoginAttempt(db, attempt);
    throw limited(after.oldest, now);
  }
  return null;
}

/** An open event stream's re-check: the token still exists (not revoked). No rate limit, no touch: not a request. */
export async function adminTokenStillValid(ctx: Context, presented: string): Promise<AdminToken | null> {
  if (presented.length > MAX_TOKEN_LENGTH) return null;
  return findAdminTokenByHash(ctx.database.db, sha256Hex(presented));
}
