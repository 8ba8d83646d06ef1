import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDedupeStore } from '../src/verify/postgres-store.js';
import { postgresUrl } from './helpers/postgres.js';
import { describeStoreContract } from './helpers/store-contract.js';

const url = await postgresUrl();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe.skipIf(!url)('PostgresDedupeStore (real PostgreSQL)', () => {
  // A schema per run: concurrent runs and other suites never see each other's rows; dropped at the end.
  const schema = `svc_sdk_verify_${process.pid}_${randomBytes(4).toString('hex')}`;
  const table = `${schema}.svc_webhook_deliveries`;
  let pool: pg.Pool;

  beforeAll(async () => {
    // Up to 20 connections: the contract's races run on separate connections.
    pool = new pg.Pool({ connectionString: url, max: 20 });
    await pool.query(`CREATE SCHEMA "${schema}"`);
  });

  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  describeStoreContract('PostgresDedupeStore', async () => {
    const store = new PostgresDedupeStore(pool, { table });
    await store.ensureSchema();
    return { store, wait: sleep };
  });

  it('creates the table with the documented columns, and ensureSchema can run again', async () => {
    await new PostgresDedupeStore(pool, { table }).ensureSchema();
    await new PostgresDedupeStore(pool, { table }).ensureSchema();
    const { rows } = await pool.query(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'svc_webhook_deliveries' ORDER BY ordinal_position`,
      [schema],
    );
    expect(rows).toEqual([
      { column_name: 'id', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'expires_at', data_type: 'timestamp with time zone', is_nullable: 'NO' },
      { column_name: 'state', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'token', data_type: 'text', is_nullable: 'NO' },
    ]);
  });

  it("upgrades svc-sdk 0.1's table in place; its rows count as done until they expire", async () => {
    const old = `${schema}.deliveries_v01`;
    await pool.query(`CREATE TABLE ${old} (id text PRIMARY KEY, expires_at timestamptz NOT NULL)`);
    await pool.query(
      `INSERT INTO ${old} VALUES ('del_live', now() + interval '1 hour'), ('del_expired', now() - interval '1 second')`,
    );
    const store = new PostgresDedupeStore(pool, { table: old });
    await store.ensureSchema();
    expect(await store.claim('del_live', 'token', 60)).toBe('done');
    expect(await store.claim('del_expired', 'token', 60)).toBe('claimed');
    // 0.1 and 0.2 may run side by side during a deploy: a 0.1 claim still inserts, and 0.2 reads it as done.
    await pool.query(`INSERT INTO ${old} (id, expires_at) VALUES ('del_from_01', now() + interval '1 hour')`);
    expect(await store.claim('del_from_01', 'token', 60)).toBe('done');
  });

  it('deleteExpired removes expired rows only', async () => {
    const own = `${schema}.deliveries_expiry`;
    const store = new PostgresDedupeStore(pool, { table: own });
    await store.ensureSchema();
    expect(await store.claim('del_short', 'a', 0.2)).toBe('claimed');
    expect(await store.claim('del_long', 'b', 60)).toBe('claimed');
    await sleep(300);
    expect(await store.deleteExpired()).toBe(1);
    expect(await store.claim('del_long', 'c', 60)).toBe('in_progress');
    expect((await pool.query(`SELECT id FROM ${own}`)).rows).toEqual([{ id: 'del_long' }]);
  });

  it('uses svc_webhook_deliveries by default and refuses unsafe table names', async () => {
    // A schema of its own first on the search path: the unqualified default table lands there, and nowhere else.
    const own = `${schema}_default`;
    await pool.query(`CREATE SCHEMA "${own}"`);
    const scoped = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path="${own}"` });
    try {
      const store = new PostgresDedupeStore(scoped);
      await store.ensureSchema();
      expect(await store.claim('del_default_table', 'token', 60)).toBe('claimed');
      const tables = await pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1`, [own]);
      expect(tables.rows).toEqual([{ table_name: 'svc_webhook_deliveries' }]);
      const rows = await pool.query(`SELECT id, state, token FROM "${own}".svc_webhook_deliveries`);
      expect(rows.rows).toEqual([{ id: 'del_default_table', state: 'in_progress', token: 'token' }]);
    } finally {
      await scoped.end();
      await pool.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
    }
    for (const name of ['a;drop table x', 'a.b.c', '"x"', '', '1abc']) {
      expect(() => new PostgresDedupeStore(pool, { table: name }), name).toThrow(TypeError);
    }
  });
});
