import type { Kysely } from 'kysely';
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
