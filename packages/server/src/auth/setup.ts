import type { Kysely } from 'kysely';
import type { Context } from '../context.js';
import type { Tables } from '../db/tables.js';
import { AppError } from '../errors.js';
import { newId } from '../lib/ids.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { countAdmins, insertAdmin, normalizeEmail, type Admin } from './admins-store.js';
import { checkPassword, hashPassword } from './passwords.js';
import { consumeSetupToken, replaceSetupToken } from './setup-store.js';

const SETUP_TOKEN_TTL_MS = 3_600_000;

async function insertNewAdmin(ctx: Context, db: Kysely<Tables>, email: string, passwordHash: string): Promise<Admin> {
  const now = ctx.clock.now();
  const id = newId('adm', now);
  try {
    await insertAdmin(db, { id, email, passwordHash, now });
  } catch (err) {
    if (ctx.database.caps.isUniqueViolation(err)) throw new AppError('conflict', 'An admin with this email exists.');
    throw err;
  }
  return { id, email: normalizeEmail(email) };
}

export async function createAdmin(ctx: Context, email: string, password: string): Promise<Admin> {
  checkPassword(password);
  return insertNewAdmin(ctx, ctx.database.db, email, await hashPassword(password));
}

/**
 * At start: with no admin yet, either create the one named by SVC_ADMIN_* or issue a one-time setup token, which
 * replaces any earlier one. Returns the setup link to print, or null.
 */
export async function bootstrapAdmin(ctx: Context): Promise<string | null> {
  if ((await countAdmins(ctx.database.db)) > 0) return null;
  const { adminEmail, adminPassword, publicUrl } = ctx.config;
  if (adminEmail && adminPassword) {
    try {
      await createAdmin(ctx, adminEmail, adminPassword);
    } catch (err) {
      // Another process sharing the database created it first.
      if (!(err instanceof AppError && err.code === 'conflict')) throw err;
    }
    return null;
  }
  const token = randomToken();
  const expiresAt = ctx.clock.now() + SETUP_TOKEN_TTL_MS;
  await ctx.database.write((trx) => replaceSetupToken(trx, sha256Hex(token), expiresAt));
  return `${publicUrl}/admin/setup?token=${token}`;
}

/**
 * POST /admin/v1/setup. Spending the token, checking that no admin exists and creating the admin are one
 * transaction: two redemptions cannot both see "no admin yet" (the token row is locked by the first), and a
 * failed creation leaves the token as it was. The password is hashed before, so no transaction waits on argon2.
 */
export async function completeSetup(ctx: Context, token: string, email: string, password: string): Promise<Admin> {
  if ((await countAdmins(ctx.database.db)) > 0) throw new AppError('conflict', 'Setup is already complete.');
  checkPassword(password);
  const passwordHash = await hashPassword(password);
  return ctx.database.write(async (trx) => {
    if (!(await consumeSetupToken(trx, sha256Hex(token), ctx.clock.now()))) {
      throw new AppError('unauthorized', 'The setup link is unknown, used, replaced or expired; restart svc for a new one.');
    }
    if ((await countAdmins(trx)) > 0) throw new AppError('conflict', 'Setup is already complete.');
    return insertNewAdmin(ctx, trx, email, passwordHash);
  });
}
