import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { newId } from '../lib/ids.js';

/**
 * Login attempts are counted in the database so every process shares one budget per email and per address.
 * An attempt is written before its password is checked (it stays as a failure unless forgotten): one row per
 * key, committed at once, so parallel attempts see each other. Returns the rows' ids.
 */
export async function recordLoginAttempt(db: Kysely<Tables>, keys: string[], now: number): Promise<string[]> {
  const rows = keys.map((key) => ({ id: newId('evt', now), key, at: now }));
  await db.insertInto('login_failures').values(rows).execute();
  return rows.map((r) => r.id);
}

/** Takes back an attempt that turned out not to be a failure (a correct password) or was never judged. */
export async function forgetLoginAttempt(db: Kysely<Tables>, ids: string[]): Promise<void> {
  await db.deleteFrom('login_failures').where('id', 'in', ids).execute();
}

/** The number of attempts for the busiest key since `since`, and when the oldest of them was. */
export async function loginFailures(db: Kysely<Tables>, keys: string[], since: number): Promise<{ count: number; oldest: number | null }> {
  const rows = await db
    .selectFrom('login_failures')
    .select(['key', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('at').as('oldest')])
    .where('key', 'in', keys)
    .where('at', '>', since)
    .groupBy('key')
    .execute();
  let best = { count: 0, oldest: null as number | null };
  for (const r of rows) {
    const n = Number(r.n);
    if (n > best.count) best = { count: n, oldest: r.oldest === null ? null : Number(r.oldest) };
  }
  return best;
}

export async function pruneLoginFailures(db: Kysely<Tables>, before: number): Promise<void> {
  await db.deleteFrom('login_failures').where('at', '<=', before).execute();
}
