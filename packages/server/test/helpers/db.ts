import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Every database-backed suite loops over DIALECTS: SQLite always, PostgreSQL when SVC_TEST_POSTGRES_URL is set.
 * Each test database is its own: a fresh SQLite file, or a fresh PostgreSQL database (dropped afterwards).
 */
export type Dialect = 'sqlite' | 'postgres';

export const POSTGRES_URL = process.env.SVC_TEST_POSTGRES_URL ?? '';
export const DIALECTS: Dialect[] = POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  url: string;
  dir: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  if (dialect === 'sqlite') {
    return { url: `sqlite:${join(dir, 'svc.db')}`, dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  // A database of its own, not a schema: Kysely's migrator reads the catalog of every schema, and a schema being
  // dropped by a parallel test file at that moment would fail it.
  const name = `svc_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dir,
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
