import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDedupeStore } from '../src/verify/postgres-store.js';
import { postgresUrl } from './helpers/postgres.js';

const url = await postgresUrl();

describe.skipIf(!url)('PostgresDedupeStore (real PostgreSQL)', () => {
  // A schema per run: concurrent runs and other suites never see each other's rows.
  const schema = `svc_sdk_verify_${process.pid}_${randomBytes(4).toString('hex')}`;
  const table = `${schema}.svc_webhook_deliveries`;
  let pool: pg.Pool;
  let store: PostgresDedupeStore;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: url, max: 20 });
    await pool.query(`CREATE SCHEMA "${schema}"`);
    store = new PostgresDedupeStore(pool, { table });
    await store.ensureSchema();
    await store.ensureSchema();
  });

  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  it('creates the table with the documented columns', async () => {
    const { rows } = await pool.query(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'svc_webhook_deliveries' ORDER BY ordinal_position`,
      [schema],
    );
    expect(rows).toEqual([
      { column_name: 'id', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'expires_at', data_type: 'timestamp with time zone', is_nullable: 'NO' },
    ]);
  });

  it('claims once, then again after release', async () => {
    expect(await store.claim('del_a', 60)).toBe(true);
    expect(await store.claim('del_a', 60)).toBe(false);
    expect(await store.claim('del_b', 60)).toBe(true);
    await store.release('del_a');
    expect(await store.claim('del_a', 60)).toBe(true);
  });

  it('lets an expired claim be taken again, and deleteExpired removes expired rows', async () => {
    expect(await store.claim('del_short', 0.2)).toBe(true);
    expect(await store.claim('del_short', 0.2)).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(await store.claim('del_short', 60)).toBe(true);
    expect(await store.claim('del_short', 60)).toBe(false);
    await pool.query(`INSERT INTO ${table} VALUES ('del_old', now() - interval '1 hour')`);
    expect(await store.deleteExpired()).toBe(1);
    expect(await store.claim('del_short', 60)).toBe(false);
  });

  it('gives exactly one true among many concurrent claims of the same id, on separate connections', async () => {
    for (let round = 0; round < 5; round++) {
      const id = `del_race_${round}`;
      const results = await Promise.all(Array.from({ length: 50 }, () => store.claim(id, 60)));
      expect(results.filter(Boolean)).toHaveLength(1);
    }
    // The same race on an expired row: exactly one caller takes it over.
    await pool.query(`INSERT INTO ${table} VALUES ('del_race_expired', now() - interval '1 second')`);
    const results = await Promise.all(Array.from({ length: 50 }, () => store.claim('del_race_expired', 60)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('uses svc_webhook_deliveries by default and refuses unsafe table names', () => {
    expect(() => new PostgresDedupeStore(pool)).not.toThrow();
    for (const name of ['a;drop table x', 'a.b.c', '"x"', '', '1abc']) {
      expect(() => new PostgresDedupeStore(pool, { table: name }), name).toThrow(TypeError);
    }
  });
});
