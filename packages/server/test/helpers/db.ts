import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Every database-backed suite loops over DIALECTS: SQLite always, PostgreSQL when SVC_TEST_POSTGRES_URL is set.
 * Each test database is its own: a fresh SQLite file, or a fresh PostgreSQL schema (dropped afterwards).
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
  const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    dir,
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
