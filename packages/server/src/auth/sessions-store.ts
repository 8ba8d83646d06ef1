import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';

export interface SessionRow {
  idHash: string;
  adminId: string;
  email: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

export async function insertSession(db: Kysely<Tables>, s: { idHash: string; adminId: string; now: number; expiresAt: number }): Promise<void> {
  await db
    .insertInto('sessions')
    .values({ id_hash: s.idHash, admin_id: s.adminId, created_at: s.now, last_seen_at: s.now, expires_at: s.expiresAt })
    .execute();
}

export async function findSession(db: Kysely<Tables>, idHash: string): Promise<SessionRow | null> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('admins', 'admins.id', 'sessions.admin_id')
    .select(['sessions.id_hash', 'sessions.admin_id', 'admins.email', 'sessions.created_at', 'sessions.last_seen_at', 'sessions.expires_at'])
    .where('sessions.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return null;
  return {
    idHash: row.id_hash,
    adminId: row.admin_id,
    email: row.email,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
  };
}

export async function touchSession(db: Kysely<Tables>, idHash: string, now: number): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
}

export async function deleteSession(db: Kysely<Tables>, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

export async function deleteExpiredSessions(db: Kysely<Tables>, now: number, idleMs: number): Promise<number> {
  const res = await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - idleMs)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Ends every session of an admin but `keepIdHash` (a password change keeps the session that made it); returns their hashes. */
export async function deleteOtherSessions(db: Kysely<Tables>, adminId: string, keepIdHash: string): Promise<string[]> {
  const rows = await db.deleteFrom('sessions').where('admin_id', '=', adminId).where('id_hash', '<>', keepIdHash).returning('id_hash').execute();
  return rows.map((r) => r.id_hash);
}
