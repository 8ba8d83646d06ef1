import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables.js';

export async function getMeta(db: Kysely<Tables>, key: string): Promise<string | null> {
  const row = await db.selectFrom('svc_meta').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value ?? null;
}

/** Inserts unless present; returns the value that is stored afterwards (the first writer wins). */
export async function putMetaOnce(db: Kysely<Tables>, key: string, value: string): Promise<string> {
  await db.insertInto('svc_meta').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
  return (await getMeta(db, key)) ?? value;
}

/**
 * Stores `value` unless the stored one sorts after it (text order): a value that only ever moves forward, whoever
 * writes it and in whatever order. Values must be written so that text order is their order (fixed width).
 */
export async function putMetaAtLeast(db: Kysely<Tables>, key: string, value: string): Promise<void> {
  await db
    .insertInto('svc_meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }).where('svc_meta.value', '<', value))
    .execute();
}

/**
 * A lease held in svc_meta (`<expiry, 15 digits>|<owner>`), so periodic work shared by several processes runs in one
 * at a time, on either database, with no session-bound lock to keep a pooled connection for: taken when it is free,
 * expired, or already the caller's (which renews it). True when the caller holds it until now + ttlMs.
 */
export async function takeLease(db: Kysely<Tables>, key: string, owner: string, now: number, ttlMs: number): Promise<boolean> {
  const stamp = (ms: number) => String(Math.max(0, Math.floor(ms))).padStart(15, '0');
  const mine = `${stamp(now + ttlMs)}|${owner}`;
  const row = await db
    .insertInto('svc_meta')
    .values({ key, value: mine })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({ value: mine })
        // Expired (its 15-digit expiry sorts before now's), or the caller's own (the owner follows `<expiry>|`).
        .where((eb) => eb.or([eb('svc_meta.value', '<', stamp(now)), eb(sql<string>`substr(svc_meta.value, 17)`, '=', owner)])),
    )
    .returning('value')
    .executeTakeFirst();
  return row?.value === mine;
}
