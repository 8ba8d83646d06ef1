import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { newId } from '../lib/ids.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { countAdmins, insertAdmin, type Admin } from './admins-store.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from './passwords.js';
import { consumeSetupToken, insertSetupToken } from './setup-store.js';

const SETUP_TOKEN_TTL_MS = 3_600_000;

export async function createAdmin(ctx: Context, email: string, password: string): Promise<Admin> {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('validation_failed', `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`, {
      errors: [{ path: '/password', message: `at least ${MIN_PASSWORD_LENGTH} characters` }],
    });
  }
  const id = newId('adm', ctx.clock.now());
  const passwordHash = await hashPassword(password);
  try {
    await insertAdmin(ctx.database.db, { id, email, passwordHash, now: ctx.clock.now() });
  } catch (err) {
    if (ctx.database.caps.isUniqueViolation(err)) throw new AppError('conflict', 'An admin with this email exists.');
    throw err;
  }
  return { id, email: email.trim().toLowerCase() };
}

/**
 * At start: with no admin yet, either create the one named by SVC_ADMIN_* or issue a one-time setup token.
 * Returns the setup link to print, or null.
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
  await insertSetupToken(ctx.database.db, sha256Hex(token), ctx.clock.now() + SETUP_TOKEN_TTL_MS);
  return `${publicUrl}/admin/setup?token=${token}`;
}

/** POST /admin/v1/setup: the token is spent even if the admin cannot be created, so it cannot be brute-forced twice. */
export async function completeSetup(ctx: Context, token: string, email: string, password: string): Promise<Admin> {
  if ((await countAdmins(ctx.database.db)) > 0) throw new AppError('conflict', 'Setup is already complete.');
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('validation_failed', `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`, {
      errors: [{ path: '/password', message: `at least ${MIN_PASSWORD_LENGTH} characters` }],
    });
  }
  const won = await consumeSetupToken(ctx.database.db, sha256Hex(token), ctx.clock.now());
  if (!won) throw new AppError('unauthorized', 'The setup link is unknown, used or expired; restart svc for a new one.');
  if ((await countAdmins(ctx.database.db)) > 0) throw new AppError('conflict', 'Setup is already complete.');
  return createAdmin(ctx, email, password);
}
