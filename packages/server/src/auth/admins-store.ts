import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';

export interface Admin {
  id: string;
  email: string;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export async function countAdmins(db: Kysely<Tables>): Promise<number> {
  const row = await db.selectFrom('admins').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertAdmin(db: Kysely<Tables>, admin: { id: string; email: string; passwordHash: string; now: number }): Promise<void> {
  await db
    .insertInto('admins')
    .values({ id: admin.id, email: normalizeEmail(admin.email), password_hash: admin.passwordHash, created_at: admin.now })
    .execute();
}

export async function findAdminByEmail(db: Kysely<Tables>, email: string): Promise<(Admin & { passwordHash: string }) | null> {
  const row = await db.selectFrom('admins').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  return row ? { id: row.id, email: row.email, passwordHash: row.password_hash } : null;
}
