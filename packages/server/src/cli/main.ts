#!/usr/bin/env -S node --initial-old-space-size=96 --max-semi-space-size=8
// The old generation's allocation limit starts at 96 MB and a full collection does not bring it below that: after a
// burst of writes a process could be left with its limit near a ~30 MB live heap, and then the feed's page buffers
// (1.4 MB each, outside the heap but counted against it) set off a full collection every ~15 pages, doubling the
// CPU of a catch-up (bench/README, tenth session). What the floor lets a busy spell leave in the old generation is
// collected once the process is idle (lib/idle-collection.ts). The young generation's two halves stop at 8 MB each,
// not Node's 16: 16 MB less resident under load, no more CPU a delivery or a feed page (bench/README, thirty-second
// session). `npm start` passes the same flags.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { loadConfig, ConfigError, type Config } from '../config/load.js';
import { ADMIN_SCOPES, type AdminScope } from '../auth/admin-scopes.js';
import { CLI_CREATOR, createAdminToken } from '../auth/admin-tokens.js';
import { createApiToken } from '../auth/api-tokens.js';
import { SCOPES, type Scope } from '../auth/api-tokens-store.js';
import { AppError } from '../errors.js';
import { sqlitePath } from '../db/connect.js';
import { takeServeLock } from '../db/serve-lock.js';
import { drainLogger, migrationsToApply, openContext, startProcess, type Running } from '../runtime.js';
import { PRUNED_TABLES, prunePass } from '../retention.js';
import { startIdleCollection } from '../lib/idle-collection.js';
import { pino } from 'pino';

/** Errors go to stderr with exit status 1; a command's result alone goes to stdout. */
function die(err: unknown): never {
  const message =
    err instanceof ConfigError
      ? `configuration error: ${err.message}`
      : err instanceof AppError
        ? `${err.code}: ${err.message}`
        : (lockedText(err) ?? (err as Error)?.message ?? String(err));
  process.stderr.write(`svc: ${message}\n`);
  process.exit(1);
}

/**
 * SQLite's "database is locked" (SQLITE_BUSY after its 5 s busy timeout) named neither the database nor who holds it:
 * a one-shot command beside a process that kept the write lock longer than that.
 */
function lockedText(err: unknown): string | null {
  if ((err as { code?: unknown } | null)?.code !== 'SQLITE_BUSY') return null;
  let where = 'the database';
  try {
    where = sqlitePath(loadConfig().databaseUrl) ?? where;
  } catch {
    // The configuration's own error was reported before any database was opened.
  }
  return `${where} is locked: another process has held its write lock for over 5 s (a long write of a running svc, svc migrate, svc restore); try again`;
}

function config(): Config {
  try {
    return loadConfig();
  } catch (err) {
    die(err);
  }
}

// One-shot commands log only warnings: their stdout is their answer (e.g. a token for $(…)).
const quietLogger = (_c: Config) => pino({ level: 'warn', base: { service: 'svc' } }, pino.destination(2));

async function runForever(parts: { api: boolean; worker: boolean }): Promise<void> {
  const c = config();
  // One serve per SQLite file (db/serve-lock.ts), checked before anything is opened, migrated or listened on.
  // `svc worker` takes no such lock: any number run beside the serve. An in-memory database is the process's own.
  const file = sqlitePath(c.databaseUrl);
  if (parts.api && file !== null && file !== ':memory:') takeServeLock(file);
  const ctx = await openContext(c);
  const running: Running = await startProcess(ctx, parts);
  // What a busy spell left in the old generation goes once the process is idle (lib/idle-collection.ts).
  const stopIdleCollection = startIdleCollection(ctx.logger);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stopIdleCollection();
    ctx.logger.info({ signal }, 'stopping');
    const exit = (code: number) => void drainLogger(ctx.logger).then(() => process.exit(code));
    const force = setTimeout(() => {
      ctx.logger.error('shutdown took too long; exiting');
      exit(1);
    }, 30_000);
    force.unref();
    running.stop().then(
      () => {
        ctx.logger.info('stopped');
        exit(0);
      },
      (err: unknown) => {
        ctx.logger.error({ err }, 'error while stopping');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

const program = new Command('svc').description('svc: records in collections, signed webhooks for every committed change').showHelpAfterError();

program
  .command('serve')
  .description('run the HTTP API and a delivery worker (migrations are applied first)')
  .option('--no-worker', 'run the HTTP API alone')
  .action((opts: { worker: boolean }) => runForever({ api: true, worker: opts.worker }).catch(die));

program
  .command('worker')
  .description('run a delivery worker alone (any number may share one PostgreSQL database)')
  .action(() => runForever({ api: false, worker: true }).catch(die));

program
  .command('migrate')
  .description('apply database migrations and exit')
  .option('--dry-run', 'list the migrations a start would apply, and apply none')
  .action(async (opts: { dryRun?: boolean }) => {
    const c = config();
    if (opts.dryRun) {
      const pending = await migrationsToApply(c).catch(die);
      process.stdout.write(pending.length === 0 ? 'no migrations to apply: the database is up to date\n' : `${pending.length} migration(s) would be applied:\n${pending.map((m) => `  ${m}\n`).join('')}`);
      return;
    }
    const ctx = await openContext(c, { logger: quietLogger(c) }).catch(die);
    await ctx.database.close();
    process.stdout.write('migrations applied\n');
  });

program
  .command('backup')
  .description('copy the live SQLite database and its secret key into a folder (while serve runs); PostgreSQL: use pg_dump')
  .requiredOption('--to <dir>', 'the folder to write (made if missing; one that holds a backup is refused)')
  .action(async (opts: { to: string }) => {
    const c = config();
    try {
      const { backup, BACKUP_MANIFEST } = await import('../backup.js');
      const m = await backup(c, resolve(opts.to), (line) => process.stderr.write(`svc: ${line}\n`));
      const dir = resolve(opts.to);
      process.stdout.write(
        `wrote ${join(dir, m.database.file)} (${m.database.bytes} bytes, sha256 ${m.database.sha256.slice(0, 16)}…, migrations up to ${m.database.migrations.at(-1) ?? 'none'})\n` +
          `wrote ${join(dir, m.key.file)} (the key that opens its webhook secrets: keep the two together)\n` +
          `wrote ${join(dir, BACKUP_MANIFEST)}\n`,
      );
    } catch (err) {
      die(err);
    }
  });

program
  .command('restore')
  .description('put a backup made by svc backup in place of the configured SQLite database (refused while a process holds it)')
  .requiredOption('--from <dir>', 'the backup folder')
  .action(async (opts: { from: string }) => {
    const c = config();
    try {
      const { restore } = await import('../backup.js');
      const r = await restore(c, resolve(opts.from), (line) => process.stderr.write(`svc: ${line}\n`));
      process.stdout.write(
        `restored ${r.database} from the backup of ${r.manifest.createdAt}\n` +
          (r.key ? `wrote ${r.key} (the backup's key)\n` : 'SVC_SECRET_KEY is the backup\'s key\n') +
          r.movedAside.map((f) => `moved what was there to ${f}\n`).join(''),
      );
    } catch (err) {
      die(err);
    }
  });

const admin = program.command('admin').description('manage admins');
admin
  .command('create')
  .description('create an admin')
  .requiredOption('--email <email>', 'login email')
  .requiredOption('--password <password>', 'at least 12 characters')
  .action(async (opts: { email: string; password: string }) => {
    const c = config();
    const ctx = await openContext(c, { logger: quietLogger(c), existing: true }).catch(die);
    try {
      const { createAdmin } = await import('../auth/setup.js');
      const created = await createAdmin(ctx, opts.email, opts.password);
      process.stdout.write(`${created.id}\n`);
    } catch (err) {
      await ctx.database.close();
      die(err);
    }
    await ctx.database.close();
  });

const token = program.command('token').description('manage API tokens');
token
  .command('create')
  .description('create an API token and print it (shown once)')
  .requiredOption('--name <name>', 'what the token is for')
  .addOption(new Option('--scope <scope...>', 'records:read, records:write, events:read (default: all three)').choices(SCOPES as string[]))
  .option('--collection <name...>', 'limit the token to these collections (default: all)')
  .action(async (opts: { name: string; scope?: string[]; collection?: string[] }) => {
    const c = config();
    const ctx = await openContext(c, { logger: quietLogger(c), existing: true }).catch(die);
    try {
      const created = await createApiToken(ctx, { name: opts.name, scopes: (opts.scope ?? [...SCOPES]) as Scope[], collections: opts.collection ?? null });
      process.stdout.write(`${created.token}\n`);
    } catch (err) {
      await ctx.database.close();
      die(err);
    }
    await ctx.database.close();
  });

const adminToken = program.command('admin-token').description('manage admin tokens (automation on the admin API)');
adminToken
  .command('create')
  .description('create an admin token and print it (shown once); revoke it in the admin UI or with DELETE /admin/v1/admin-tokens/{id}')
  .requiredOption('--name <name>', 'what the token is for')
  // No default: an admin token is a key to the admin API, so its reach is always chosen, never implied.
  .addOption(new Option('--scope <scope...>', 'admin:read, admin:webhooks, admin:collections, admin:tokens').choices(ADMIN_SCOPES as string[]).makeOptionMandatory())
  .action(async (opts: { name: string; scope: string[] }) => {
    const c = config();
    const ctx = await openContext(c, { logger: quietLogger(c), existing: true }).catch(die);
    try {
      const created = await createAdminToken(ctx, { name: opts.name, scopes: opts.scope as AdminScope[], createdBy: CLI_CREATOR });
      process.stdout.write(`${created.token}\n`);
    } catch (err) {
      await ctx.database.close();
      die(err);
    }
    await ctx.database.close();
  });

/**
 * The token of `svc listen`: `--token` (seen by every user of the machine in `ps`), `--token-file` or `SVC_TOKEN`, in
 * that order of precedence (commander reads the variable). A file holds the token on its first line.
 */
function listenToken(opts: { token?: string; tokenFile?: string }, source: string | undefined): string {
  if (opts.tokenFile !== undefined) {
    if (source === 'cli') die(new Error('give --token or --token-file, not both'));
    let text = '';
    try {
      text = readFileSync(opts.tokenFile, 'utf8');
    } catch (err) {
      die(new Error(`--token-file: ${(err as Error).message}`));
    }
    const token = (text.split(/\r?\n/)[0] ?? '').trim();
    if (token === '') die(new Error(`--token-file: ${opts.tokenFile} holds no token on its first line`));
    return token;
  }
  if (!opts.token) die(new Error('svc listen needs a token: SVC_TOKEN=… or --token-file <path> (or --token, which ps shows)'));
  return opts.token;
}

program
  .command('listen')
  .description('follow the event stream and forward each event to a local URL, signed like a webhook delivery')
  .requiredOption('--url <url>', "svc's base URL, e.g. http://127.0.0.1:8080")
  .addOption(new Option('--token <token>', 'an API token with events:read; other users see it in ps: prefer SVC_TOKEN or --token-file').env('SVC_TOKEN'))
  .option('--token-file <path>', 'read the API token from the first line of this file')
  .requiredOption('--forward-to <url>', 'where to POST each event (http or https)')
  .option('--collection <name...>', 'only these collections')
  .option('--topic <topic...>', 'only these topics')
  .option('--after <cursor|evt_id>', 'start after this cursor or event id, as each line shows them (default: the present)')
  .option('--secret <whsec_…>', 'the signing secret (default: a new one each run, printed at start)')
  .action(async (opts: { url: string; token?: string; tokenFile?: string; forwardTo: string; collection?: string[]; topic?: string[]; after?: string; secret?: string }, command: Command) => {
    for (const [name, value] of [['--url', opts.url], ['--forward-to', opts.forwardTo]] as const) {
      if (!/^https?:\/\//.test(value) || !URL.canParse(value)) die(new Error(`${name} must be an http(s) URL`));
    }
    if (opts.secret !== undefined && !/^whsec_\S{16,}$/.test(opts.secret)) die(new Error('--secret must look like whsec_…'));
    const token = listenToken(opts, command.getOptionValueSource('token'));
    // Loaded here: the other commands do not pay for the webhook modules it uses.
    const { listen, ListenError, newListenSecret } = await import('./listen.js');
    const secret = opts.secret ?? newListenSecret();
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    process.once('SIGTERM', () => stop.abort());
    process.stdout.write(`svc listen: forwarding to ${opts.forwardTo}\nsigning secret: ${secret}\n`);
    let cursor: string;
    try {
      cursor = await listen({
        url: opts.url,
        token,
        forwardTo: opts.forwardTo,
        collections: opts.collection ?? [],
        topics: opts.topic ?? [],
        after: opts.after ?? null,
        secret,
        print: (line) => process.stdout.write(`${line}\n`),
        signal: stop.signal,
      });
    } catch (err) {
      if (!(err instanceof ListenError) && stop.signal.aborted) return;
      die(err);
    }
    process.stdout.write(`svc listen: stopped (resume with --after ${cursor})\n`);
  });

program
  .command('prune')
  .description('run one retention pass now and print the rows it removed per table (SVC_RETENTION_*)')
  .option('--dry-run', 'count what would be removed, remove nothing')
  .action(async (opts: { dryRun?: boolean }) => {
    const c = config();
    const ctx = await openContext(c, { logger: quietLogger(c), existing: true }).catch(die);
    try {
      // A server may be running on the same database: its writes must get in between this pass's batches.
      const counts = await prunePass(ctx, { dryRun: opts.dryRun === true, othersWrite: true });
      const verb = opts.dryRun ? 'would be removed' : 'removed';
      for (const table of PRUNED_TABLES) process.stdout.write(`${table}: ${counts[table]} ${verb}\n`);
    } catch (err) {
      await ctx.database.close();
      die(err);
    }
    await ctx.database.close();
  });

program.parseAsync(process.argv).catch(die);
