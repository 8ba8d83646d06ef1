import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { provided } from './required.js';

/**
 * Every database-backed suite loops over DIALECTS: SQLite always, PostgreSQL when SVC_TEST_POSTGRES_URL is set.
 * Each test database is its own: a fresh SQLite file, or a PostgreSQL database of its own (dropped afterwards).
 */
export type Dialect = 'sqlite' | 'postgres';

export const POSTGRES_URL = provided('postgres', process.env.SVC_TEST_POSTGRES_URL ?? '');
export const DIALECTS: Dialect[] = POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  url: string;
  dir: string;
  drop(): Promise<void>;
}

/**
 * A database for one test. On PostgreSQL it is a copy of the migrated template (`CREATE DATABASE … TEMPLATE`, a few
 * milliseconds' work where migrating takes seconds), so svc's start finds every migration applied; on SQLite a new file,
 * which svc's start migrates (there it costs little).
 */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  return dialect === 'sqlite' ? sqliteFile() : postgresDatabase(await migratedTemplate());
}

/** A database with nothing in it, not even svc_migrations: for the tests of migrating itself. */
export async function createEmptyTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  return dialect === 'sqlite' ? sqliteFile() : postgresDatabase(null);
}

function sqliteFile(): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  return { url: `sqlite:${join(dir, 'svc.db')}`, dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

const urlOf = (name: string): string => {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function postgresDatabase(template: string | null): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  // A database of its own, not a schema: Kysely's migrator reads the catalog of every schema, and a schema being
  // dropped by a parallel test file at that moment would fail it.
  const name = `svc_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await withAdmin((c) => c.query(`create database ${name}${template ? ` template ${template}` : ''}`));
  return {
    url: urlOf(name),
    dir,
    drop: async () => {
      await withAdmin((c) => c.query(`drop database if exists ${name} with (force)`));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/**
 * What migrating runs, hashed: the migrator, every migration, and the modules they import (followed; type-only imports
 * aside). Any change to one of them names a new template, built afresh.
 */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  const seen = new Set<string>();
  const visit = (path: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    const text = readFileSync(path, 'utf8');
    hash.update(relative(SRC, path)).update('\0').update(text).update('\0');
    for (const m of text.matchAll(/^import (?!type )[^;]*?from '(\.{1,2}\/[^']+)\.js'/gm)) visit(resolve(dirname(path), `${m[1]}.ts`));
  };
  visit(join(SRC, 'db/migrate.ts'));
  for (const file of readdirSync(join(SRC, 'db/migrations')).sort()) visit(join(SRC, 'db/migrations', file));
  return hash.digest('hex');
}

/** A template nobody has started a run with for this long is dropped when another is built (migrations changed). */
const TEMPLATE_UNUSED_MS = 24 * 3600_000;
let template: Promise<string> | null = null;

/** The migrated template's name; built once per set of migrations, whichever worker (or concurrent run) comes first. */
export function migratedTemplate(): Promise<string> {
  template ??= ensureTemplate().catch((err: unknown) => {
    template = null;
    throw err;
  });
  return template;
}

async function ensureTemplate(): Promise<string> {
  const hash = migrationsHash();
  const name = `svc_tpl_${hash.slice(0, 16)}`;
  return withAdmin(async (admin) => {
    // Workers of this run and of concurrent runs with the same migrations wait here for the one that builds it; the
    // lock goes with this session, so a builder killed midway blocks nobody.
    await admin.query('select pg_advisory_lock($1)', [BigInt.asIntN(64, BigInt(`0x${hash.slice(0, 16)}`)).toString()]);
    const found = await admin.query('select 1 from pg_database where datname = $1 and datistemplate', [name]);
    if (found.rowCount === 0) {
      // Built under another name, then renamed: a template under `name` is always whole.
      const building = `${name}_build`;
      await admin.query(`drop database if exists ${building} with (force)`);
      await admin.query(`create database ${building}`);
      const database = await connect(urlOf(building), { sqliteSynchronous: 'NORMAL', poolSize: 1 });
      try {
        await migrateToLatest(database);
      } finally {
        await database.close();
      }
      await admin.query(`alter database ${building} rename to ${name}`);
      // Nobody may connect to it: CREATE DATABASE … TEMPLATE fails while any session is connected to the template.
      await admin.query(`alter database ${name} with is_template true allow_connections false`);
      await dropUnusedTemplates(admin, name);
    }
    // Marks it used now (one statement per worker): what dropUnusedTemplates goes by.
    await admin.query(`comment on database ${name} is '${new Date().toISOString()}'`);
    return name;
  });
}

/** Templates of other migrations (older checkouts, earlier commits) that no run has used for a day. */
async function dropUnusedTemplates(admin: pg.Client, keep: string): Promise<void> {
  const { rows } = await admin.query<{ datname: string; used: string | null }>(
    `select datname, shobj_description(oid, 'pg_database') as used from pg_database where datname like 'svc\\_tpl\\_%' and datname <> $1`,
    [keep],
  );
  for (const { datname, used } of rows) {
    const at = used ? Date.parse(used) : NaN;
    if (!(Date.now() - at > TEMPLATE_UNUSED_MS)) continue;
    await admin.query(`alter database ${datname} with is_template false`);
    await admin.query(`drop database if exists ${datname} with (force)`);
  }
}
