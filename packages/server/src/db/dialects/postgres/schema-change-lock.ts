import pg from 'pg';
import type { OutageSettings } from '../postgres-outages.js';

/** The first key of the advisory lock (the second is the collection name's hashtext); any fixed int4 of svc's own. */
const SCHEMA_CHANGE_LOCKS = 0x53564301;

/**
 * Database.schemaChange on PostgreSQL: a session advisory lock, on a connection of its own rather than the pool's, held
 * for the whole change. Ending that connection lets go, so a process that dies (or loses the connection) holds nothing,
 * and no pooled session can keep the lock after a failed unlock. Taken on a pool connection instead, changes of
 * several collections at once each held one while their index builds waited for another: ten would take every
 * connection and leave the builds, and every record write, waiting for the pool's checkout timeout. A connection costs
 * a few milliseconds once per schema change. A hashtext collision only makes two collections' changes exclusive.
 */
export async function schemaChangeLock(url: string, settings: OutageSettings, collection: string): Promise<(() => Promise<void>) | null> {
  const client = new pg.Client({ connectionString: url, ...settings });
  // A connection that breaks while held loses the lock with it; the change it guards fails or ends on its own.
  client.on('error', () => {});
  const end = async () => {
    await client.end().catch(() => {});
  };
  try {
    await client.connect();
    const { rows } = await client.query<{ taken: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as taken', [SCHEMA_CHANGE_LOCKS, collection]);
    if (rows[0]?.taken === true) return end;
  } catch (err) {
    await end();
    throw err;
  }
  await end();
  return null;
}
