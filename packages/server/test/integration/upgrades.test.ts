import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { connect } from '../../src/db/connect.js';
import { ALL_MIGRATIONS, migrateToLatest, NewerDatabaseError } from '../../src/db/migrate.js';
import { migrationsToApply, openContext } from '../../src/runtime.js';
import { createEmptyTestDatabase, DIALECTS, type TestDatabase } from '../helpers/db.js';
import { svc } from '../helpers/svc-command.js';

/** SPEC §16 upgrades: `svc migrate --dry-run` lists what a start would apply; a newer database is refused by name. */
describe.each(DIALECTS)('upgrades (%s)', (dialect) => {
  let db: TestDatabase | null = null;
  afterEach(async () => {
    await db?.drop();
    db = null;
  });
  const env = (url: string) => ({ SVC_DATABASE_URL: url, SVC_SECRET_KEY: randomBytes(32).toString('hex'), SVC_LOG_LEVEL: 'warn' });
  const config = (url: string) => loadConfig(env(url));

  it('migrate --dry-run lists the migrations a start would apply and applies none', async () => {
    db = await createEmptyTestDatabase(dialect);
    // An install of an older version: every migration but the newest two.
    const database = await connect(db.url, { sqliteSynchronous: 'NORMAL', poolSize: 2 });
    await migrateToLatest(database);
    const [secondNewest, newest] = ALL_MIGRATIONS.slice(-2);
    await sql`delete from svc_migrations where name in (${secondNewest!}, ${newest!})`.execute(database.db);
    await database.close();

    expect(await migrationsToApply(config(db.url))).toEqual([secondNewest, newest]);
    const dry = await svc(['migrate', '--dry-run'], env(db.url));
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(`2 migration(s) would be applied:\n  ${secondNewest}\n  ${newest}\n`);
    // Nothing was applied: the same two are still to come.
    expect(await migrationsToApply(config(db.url))).toEqual([secondNewest, newest]);
  }, 120_000);

  it('a database migrated by a newer svc is refused at start and by migrate, naming what it does not know', async () => {
    db = await createEmptyTestDatabase(dialect);
    const database = await connect(db.url, { sqliteSynchronous: 'NORMAL', poolSize: 2 });
    await migrateToLatest(database);
    await sql`insert into svc_migrations (name, timestamp) values ('900_from_the_future', '2027-01-01T00:00:00.000Z')`.execute(database.db);
    await database.close();

    await expect(openContext(config(db.url))).rejects.toThrow(NewerDatabaseError);
    await expect(openContext(config(db.url))).rejects.toThrow(/900_from_the_future/);
    for (const args of [['migrate'], ['migrate', '--dry-run'], ['serve']]) {
      const res = await svc(args, env(db.url));
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr).toMatch(/newer svc.*900_from_the_future.*refuses to start/s);
    }
    // Three svc processes through tsx: slow on a loaded machine.
  }, 120_000);
});

describe('migrate --dry-run on a SQLite file that does not exist yet', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lists every migration and makes no file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-dry-'));
    const file = join(dir, 'svc.db');
    const res = await svc(['migrate', '--dry-run'], { SVC_DATABASE_URL: `sqlite:${file}`, SVC_LOG_LEVEL: 'warn' });
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n').filter((l) => l.startsWith('  ')).map((l) => l.trim())).toEqual([...ALL_MIGRATIONS]);
    expect(existsSync(file)).toBe(false);
    expect((await svc(['migrate'], { SVC_DATABASE_URL: `sqlite:${file}`, SVC_LOG_LEVEL: 'warn' })).code).toBe(0);
    expect((await svc(['migrate', '--dry-run'], { SVC_DATABASE_URL: `sqlite:${file}`, SVC_LOG_LEVEL: 'warn' })).stdout).toBe('no migrations to apply: the database is up to date\n');
  }, 120_000);
});
