import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './connect.js';
import * as m001 from './migrations/001_initial.js';
import * as m002 from './migrations/002_claim_index.js';
import * as m003 from './migrations/003_lean_jobs.js';
import * as m004 from './migrations/004_job_constraints.js';
import * as m005 from './migrations/005_event_feed.js';
import * as m006 from './migrations/006_subscriptions.js';
import * as m007 from './migrations/007_operations.js';
import * as m008 from './migrations/008_attempt_diagnostics.js';
import * as m009 from './migrations/009_record_queries.js';
import * as m010 from './migrations/010_field_statistics.js';
import * as m011 from './migrations/011_lean_claims.js';
import * as m012 from './migrations/012_event_json_prefix.js';
import * as m013 from './migrations/013_case_mapping.js';
import * as m014 from './migrations/014_event_retention_index.js';
import * as m015 from './migrations/015_receivers.js';
import * as m016 from './migrations/016_admin_api.js';
import * as m017 from './migrations/017_broker_targets.js';
import * as m018 from './migrations/018_admin_tokens.js';
import * as m019 from './migrations/019_event_trace.js';
import * as m020 from './migrations/020_success_on_job.js';
import * as m021 from './migrations/021_settled_job_indexes.js';
import * as m022 from './migrations/022_targets_version.js';
import * as m023 from './migrations/023_collections_version.js';
import * as m024 from './migrations/024_event_collection_feed.js';
import * as m025 from './migrations/025_topic_indexes.js';

/** Migrations are compiled in (no directory scan), numbered, forward-only. */
const MIGRATIONS: Record<string, Migration> = {
  '001_initial': m001,
  '002_claim_index': m002,
  '003_lean_jobs': m003,
  '004_job_constraints': m004,
  '005_event_feed': m005,
  '006_subscriptions': m006,
  '007_operations': m007,
  '008_attempt_diagnostics': m008,
  '009_record_queries': m009,
  '010_field_statistics': m010,
  '011_lean_claims': m011,
  '012_event_json_prefix': m012,
  '013_case_mapping': m013,
  '014_event_retention_index': m014,
  '015_receivers': m015,
  '016_admin_api': m016,
  '017_broker_targets': m017,
  '018_admin_tokens': m018,
  '019_event_trace': m019,
  '020_success_on_job': m020,
  '021_settled_job_indexes': m021,
  '022_targets_version': m022,
  '023_collections_version': m023,
  '024_event_collection_feed': m024,
  '025_topic_indexes': m025,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export const ALL_MIGRATIONS: readonly string[] = Object.keys(MIGRATIONS).sort();
export const LATEST_MIGRATION = ALL_MIGRATIONS.at(-1)!;

async function migrator(database: Database): Promise<Migrator> {
  return new Migrator({
    db: database.db,
    provider,
    migrationTableName: 'svc_migrations',
    migrationLockTableName: 'svc_migrations_lock',
    migrationTableSchema: await database.caps.currentSchema(database.db),
  });
}

/** A database some newer svc migrated: this code does not know every migration it holds. */
export class NewerDatabaseError extends Error {
  constructor(readonly unknown: readonly string[]) {
    super(
      `this database was migrated by a newer svc: it holds migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, unknown to this version ` +
        `(its newest is ${LATEST_MIGRATION}). svc refuses to start rather than run old code on a newer schema: run that newer version, or restore a backup made before the upgrade.`,
    );
    this.name = 'NewerDatabaseError';
  }
}

/** Migrations the database records as applied that this code does not know (none on a new database). */
export async function unknownMigrations(database: Database): Promise<string[]> {
  let rows: Array<{ name: string }>;
  try {
    rows = (await sql<{ name: string }>`select name from svc_migrations order by name`.execute(database.db)).rows;
  } catch {
    // No table yet: nothing was ever migrated (a query error outside a transaction leaves nothing behind).
    return [];
  }
  return rows.map((r) => r.name).filter((name) => !(name in MIGRATIONS));
}

/**
 * Applies what is pending, under the database's migration lock when it has one (SQLite: two processes starting on a
 * new file at once, `svc serve` and `svc token create`, each applied the same migrations and one failed, "duplicate
 * column name"). The migrator reads what is applied after the lock is taken: the second process applies nothing.
 */
export async function migrateToLatest(database: Database, onWait: () => void = () => {}): Promise<string[]> {
  const newer = await unknownMigrations(database);
  if (newer.length > 0) throw new NewerDatabaseError(newer);
  const m = await migrator(database);
  if ((await pendingOf(m)).length === 0) return [];
  const release = database.migrationLock ? await database.migrationLock(onWait) : () => {};
  try {
    const { error, results } = await m.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  } finally {
    release();
  }
}

const pendingOf = async (m: Migrator): Promise<string[]> => (await m.getMigrations()).filter((x) => !x.executedAt).map((x) => x.name);

export async function pendingMigrations(database: Database): Promise<string[]> {
  return pendingOf(await migrator(database));
}
