import pg from 'pg';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The PostgreSQL to test against: `SVC_TEST_POSTGRES_URL` when set (then it must work), else the machine's default
 * when it answers, else undefined (the suite is skipped).
 */
export async function postgresUrl(): Promise<string | undefined> {
  const configured = process.env.SVC_TEST_POSTGRES_URL;
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
