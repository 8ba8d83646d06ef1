import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { newId } from '../lib/ids.js';

/** Failed logins are counted in the database so every process shares one budget per email and per address. */
export async function recordLoginFailure(db: Kysely<Tables>, keys: string[], now: number): Promise<void> {
  await db
    .insertInto('login_failures')
    .values(keys.map((key) => ({ id: newId('evt', now), key, at: now })))
    .execute();
}

/** The number of failures for the busiest key since `since`, and when the oldest of them was. */
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
