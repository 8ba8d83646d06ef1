import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { ALL_MIGRATIONS, migrateToLatest, pendingMigrations } from '../../src/db/migrate.js';
import { createEmptyTestDatabase, createTestDatabase, DIALECTS, migratedTemplate, migrationsHash, POSTGRES_URL, type TestDatabase } from '../helpers/db.js';

/** The test databases themselves (helpers/db.ts): what every other database test starts from. */
describe.each(DIALECTS)('test databases (%s)', (dialect) => {
  const pending = async (test: TestDatabase, then?: 'migrate'): Promise<{ pending: string[]; applied: string[] }> => {
    const database = await connect(test.url, { sqliteSynchronous: 'NORMAL', poolSize: 2 });
    try {
      return { pending: await pendingMigrations(database), applied: then ? await migrateToLatest(database) : [] };
    } finally {
      await database.close();
      await test.drop();
    }
  };

  it('createTestDatabase: on PostgreSQL a copy of the migrated template, where migrating finds nothing to do; on SQLite a new file', async () => {
    const { pending: before, applied } = await pending(await createTestDatabase(dialect), 'migrate');
    if (dialect === 'postgres') {
      expect(before).toEqual([]);
      expect(applied).toEqual([]);
    } else {
      expect(before).toEqual([...ALL_MIGRATIONS]);
    }
  });

  it('createEmptyTestDatabase: nothing applied, every migration to come (the tests of migrating start here)', async () => {
    expect((await pending(await createEmptyTestDatabase(dialect))).pending).toEqual([...ALL_MIGRATIONS]);
  });

  it.runIf(dialect === 'postgres')('the template is named by the migrations\' hash, is a template, and takes no connection', async () => {
    const name = await migratedTemplate();
    expect(name).toBe(`svc_tpl_${migrationsHash().slice(0, 16)}`);
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query('select datistemplate, datallowconn from pg_database where datname = $1', [name]);
      expect(rows).toEqual([{ datistemplate: true, datallowconn: false }]);
    } finally {
      await admin.end();
    }
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await expect(client.connect()).rejects.toThrow(/not currently accepting connections/);
    await client.end().catch(() => {});
  });
});
