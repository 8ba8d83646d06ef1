import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto.js';
import { findAdmin, findAdminByEmail, markLogin, setPasswordHash, type Admin } from './admins-store.js';
import { forgetLoginAttempt, loginFailures, recordLoginAttempt } from './login-limit-store.js';
import { checkPassword, hashPassword, verifyPassword } from './passwords.js';
import { deleteOtherSessions, deleteSession, findSession, insertSession, touchSession } from './sessions-store.js';

export interface ActiveSession {
  idHash: string;
  admin: Admin;
  csrfToken: string;
  expiresAt: number;
}

const LOGIN_WINDOW_MS = 15 * 60_000;
// Writing last_seen_at on every admin request would make reads write; a minute of slack on idle expiry is fine.
const TOUCH_EVERY_MS = 60_000;

/** The CSRF token is derived from the session token with the server key: bound to the session, nothing stored. */
const csrfFor = (ctx: Context, sessionToken: string): string => ctx.box.derive('csrf', sessionToken);

function expiry(ctx: Context, createdAt: number, lastSeenAt: number): number {
  const { sessionIdleMinutes, sessionMaxHours } = ctx.config;
  return Math.min(lastSeenAt + sessionIdleMinutes * 60_000, createdAt + sessionMaxHours * 3_600_000);
}

/**
 * Runs `judge` (a password check that throws when it fails) as one login attempt of `email` from `clientAddress`:
 * counted before the password is checked — the attempt is committed first, then every attempt committed so far is
 * counted, this one included. Of N parallel guesses, the k-th to be judged has seen at least k rows, so at most
 * loginMaxFailures are ever judged within the window, across processes too. A judged failure stays counted.
 */
async function judgedAttempt<T>(ctx: Context, email: string, clientAddress: string, judge: () => Promise<T>): Promise<T> {
  const { db } = ctx.database;
  const now = ctx.clock.now();
  const keys = [`email:${email.trim().toLowerCase()}`, `ip:${clientAddress}`];
  const attempt = await recordLoginAttempt(db, keys, now);
  const recent = await loginFailures(db, keys, now - LOGIN_WINDOW_MS);
  if (recent.count > ctx.config.loginMaxFailures) {
    // Not judged, so not a failure: refused attempts do not push the window further out.
    await forgetLoginAttempt(db, attempt);
    const retryAfter = Math.max(1, Math.ceil(((recent.oldest ?? now) + LOGIN_WINDOW_MS - now) / 1000));
    throw new AppError('rate_limited', 'Too many failed logins; try again later.', { headers: { 'retry-after': String(retryAfter) } });
  }
  const result = await judge();
  await forgetLoginAttempt(db, attempt);
  return result;
}

export async function login(ctx: Context, email: string, password: string, clientAddress: string): Promise<ActiveSession & { token: string }> {
  const { db } = ctx.database;
  const admin = await judgedAttempt(ctx, email, clientAddress, async () => {
    const found = await findAdminByEmail(db, email);
    const ok = await verifyPassword(found?.passwordHash ?? null, password);
    if (!found || !ok) throw new AppError('unauthorized', 'Email or password is wrong.');
    return found;
  });
  const now = ctx.clock.now();
  const token = randomToken();
  const idHash = sha256Hex(token);
  const expiresAt = now + ctx.config.sessionMaxHours * 3_600_000;
  await insertSession(db, { idHash, adminId: admin.id, now, expiresAt });
  await markLogin(db, admin.id, now);
  return { token, idHash, admin: { id: admin.id, email: admin.email }, csrfToken: csrfFor(ctx, token), expiresAt: expiry(ctx, now, now) };
}

/**
 * `POST /admin/v1/session/password` (SPEC §17): the current password is judged as a login of this admin is (a wrong
 * one is `unauthorized` and counts against SVC_LOGIN_MAX_FAILURES), then the new one replaces it and every other
 * session of the admin ends. Returns the ended sessions' hashes, to end their event streams.
 */
export async function changePassword(ctx: Context, session: ActiveSession, currentPassword: string, newPassword: string, clientAddress: string): Promise<string[]> {
  checkPassword(newPassword, '/newPassword');
  const { db } = ctx.database;
  await judgedAttempt(ctx, session.admin.email, clientAddress, async () => {
    const admin = await findAdmin(db, session.admin.id);
    if (!(await verifyPassword(admin?.passwordHash ?? null, currentPassword))) throw new AppError('unauthorized', 'The current password is wrong.');
  });
  // Hashed before the transaction: no transaction waits on argon2.
  const passwordHash = await hashPassword(newPassword);
  return db.transaction().execute(async (trx) => {
    await setPasswordHash(trx, session.admin.id, passwordHash);
    return deleteOtherSessions(trx, session.admin.id, session.idHash);
  });
}

/**
 * The live session behind a cookie value, or null when it is unknown or expired (idle or absolute). `touch: false`
 * looks without counting it as activity (an admin event stream's re-checks: an open stream must not keep a session alive).
 */
export async function resolveSession(ctx: Context, token: string, opts: { touch?: boolean } = {}): Promise<ActiveSession | null> {
  const { db } = ctx.database;
  const now = ctx.clock.now();
  const idHash = sha256Hex(token);
  const row = await findSession(db, idHash);
  if (!row) return null;
  if (now >= expiry(ctx, row.createdAt, row.lastSeenAt) || now >= row.expiresAt) {
    await deleteSession(db, idHash);
    return null;
  }
  let lastSeen = row.lastSeenAt;
  if (opts.touch !== false && now - row.lastSeenAt >= TOUCH_EVERY_MS) {
    await touchSession(db, idHash, now);
    lastSeen = now;
  }
  return {
    idHash,
    admin: { id: row.adminId, email: row.email },
    csrfToken: csrfFor(ctx, token),
    expiresAt: expiry(ctx, row.createdAt, lastSeen),
  };
}

export const csrfMatches = (session: ActiveSession, presented: string | undefined): boolean =>
  presented !== undefined && safeEqual(session.csrfToken, presented);

export async function logout(ctx: Context, session: ActiveSession): Promise<void> {
  await deleteSession(ctx.database.db, session.idHash);
}
