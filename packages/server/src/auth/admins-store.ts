import { sql, type Kysely } from 'kysely';
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

/** An admin as the admins list shows it (SPEC §17). */
export interface AdminAccount extends Admin {
  createdAt: number;
  lastLoginAt: number | null;
}

const toAccount = (r: { id: string; email: string; created_at: number; last_login_at: number | null }): AdminAccount => ({
  id: r.id,
  email: r.email,
  createdAt: Number(r.created_at),
  lastLoginAt: r.last_login_at === null ? null : Number(r.last_login_at),
});

/** In creation order (ids sort by time), after `afterId`. */
export async function listAdmins(db: Kysely<Tables>, afterId: string | null, limit: number): Promise<AdminAccount[]> {
  let q = db.selectFrom('admins').select(['id', 'email', 'created_at', 'last_login_at']).orderBy('id').limit(limit);
  if (afterId) q = q.where('id', '>', afterId);
  return (await q.execute()).map(toAccount);
}

export async function findAdmin(db: Kysely<Tables>, id: string): Promise<(AdminAccount & { passwordHash: string }) | null> {
  const row = await db.selectFrom('admins').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? { ...toAccount(row), passwordHash: row.password_hash } : null;
}

export async function markLogin(db: Kysely<Tables>, id: string, now: number): Promise<void> {
  await db.updateTable('admins').set({ last_login_at: now }).where('id', '=', id).execute();
}

export async function setPasswordHash(db: Kysely<Tables>, id: string, passwordHash: string): Promise<void> {
  await db.updateTable('admins').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/**
 * Deletes an admin unless it is the last one, with its sessions; returns the deleted sessions' hashes (to end their
 * streams). Run in a transaction. Every admin row is locked first (an update that changes nothing): two deletions
 * of the last two admins, one each, would otherwise both count two and leave none. The second now waits for the
 * first and counts after it committed (PostgreSQL takes a new snapshot per statement; SQLite has one writer).
 */
export async function deleteAdminUnlessLast(trx: Kysely<Tables>, id: string): Promise<{ outcome: 'deleted' | 'last' | 'missing'; sessions: string[] }> {
  await trx.updateTable('admins').set({ created_at: sql`created_at` }).execute();
  if (!(await trx.selectFrom('admins').select('id').where('id', '=', id).executeTakeFirst())) return { outcome: 'missing', sessions: [] };
  if ((await countAdmins(trx)) <= 1) return { outcome: 'last', sessions: [] };
  const sessions = await trx.deleteFrom('sessions').where('admin_id', '=', id).returning('id_hash').execute();
  await trx.deleteFrom('admins').where('id', '=', id).execute();
  return { outcome: 'deleted', sessions: sessions.map((s) => s.id_hash) };
}

export async function findAdminByEmail(db: Kysely<Tables>, email: string): Promise<(Admin & { passwordHash: string }) | null> {
  const row = await db.selectFrom('admins').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  return row ? { id: row.id, email: row.email, passwordHash: row.password_hash } : null;
}
