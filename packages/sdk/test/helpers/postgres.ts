import pg from 'pg';
import { provided } from '../../../server/test/helpers/required.js';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The PostgreSQL to test against: `SVC_TEST_POSTGRES_URL` when set (then it must work), else the machine's default
 * when it answers, else undefined (the suite is skipped; with SVC_TEST_REQUIRE naming postgres, an error instead).
 */
export async function postgresUrl(): Promise<string | undefined> {
  const configured = provided('postgres', process.env.SVC_TEST_POSTGRES_URL ?? '');
  if (configured) return configured;
  const client = new pg.Client({ connectionString: DEFAULT_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return DEFAULT_URL;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}
