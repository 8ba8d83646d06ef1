import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { pino, type Logger } from 'pino';
import { createRegistry } from './http/metrics.js';
import type { Config } from './config/schema.js';
import { ConfigError } from './config/schema.js';
import { resolveSecretKey } from './db/secret-key.js';
import type { Context } from './context.js';
import { connect, sqlitePath, type Database } from './db/connect.js';
import { databaseClock } from './db/database-clock.js';
import { getMeta, putMetaOnce } from './db/meta-store.js';
import { ALL_MIGRATIONS, migrateToLatest, NewerDatabaseError, pendingMigrations, unknownMigrations } from './db/migrate.js';
import { logTimeField, systemClock, type Clock } from './lib/clock.js';
import { SecretBox } from './lib/crypto.js';
import { redactUrl } from './lib/redact-url.js';
import { createDeliveryClient, type DeliveryClientOptions } from './webhooks/http-client.js';
import type { Resolver } from './lib/resolver.js';
import { createDeliveryResolver } from './webhooks/dns-resolver.js';
import { extraCertificates } from './webhooks/https/trust-store.js';
import { registerWebhookMetrics } from './webhooks/metrics.js';
import { BrokerPool, registerBrokerMetrics } from './webhooks/senders/broker-pool.js';
import { routeByType } from './webhooks/senders/route-by-type.js';
import { startMaintenance } from './maintenance.js';
import { startTracing } from './tracing/tracing.js';
import { registerRetentionMetrics, startRetention } from './retention.js';
import { DeliveryWorker, type DeliverySender } from './webhooks/worker/worker.js';
import type { FastifyInstance } from 'fastify';

/**
 * pino's own default destination (sonic-boom on stdout, asynchronous), with its pending chunk cut at 4 KiB instead of
 * 16: each line written measures the chunk it joins (Buffer.byteLength, which flattens the concatenated text first),
 * so a line cost up to a 16 KiB copy while a write was in flight (1.7-3.2 µs against ~1 µs, a request's line, W1).
 */
const logDestination = () => pino.destination({ dest: process.stdout.fd || 1, maxWrite: 4096 });

export const createLogger = (config: Config): Logger =>
  pino({ level: config.logLevel, base: { service: 'svc' }, timestamp: logTimeField, redact: ['req.headers.authorization', 'req.headers.cookie'] }, logDestination());

/** The part of pino's default destination (sonic-boom) that a clean exit needs. */
interface EndableStream {
  destroyed?: boolean;
  end?: () => void;
  once(event: 'close' | 'error', listener: () => void): unknown;
}

/**
 * Resolves once every log line already logged is written, in order. pino writes to stdout
 * asynchronously; a process.exit() with a write still in flight can lose or reorder the last lines
 * (the "stopped" that tells an operator the shutdown was clean). Waits at most `timeoutMs`.
 */
export function drainLogger(logger: Logger, timeoutMs = 2_000): Promise<void> {
  const stream = (logger as unknown as Record<symbol, EndableStream | undefined>)[pino.symbols.streamSym];
  if (!stream || typeof stream.end !== 'function' || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    stream.once('close', done);
    stream.once('error', done);
    stream.end!();
  });
}

const connectOptions = (config: Config) => ({
  sqliteSynchronous: config.sqliteSynchronous,
  poolSize: Math.max(10, config.webhookConcurrency / 4),
  queryTimeoutMs: config.queryTimeoutMs,
  sqliteReaders: config.sqliteReaders,
  requestTimeoutMs: config.requestTimeoutMs,
});

/**
 * What a start would apply, in order, applying nothing (`svc migrate --dry-run`); a database a newer svc migrated is
 * refused here as at a start. No secret key is needed: nothing is opened but the database.
 */
export async function migrationsToApply(config: Config): Promise<string[]> {
  // A SQLite file that does not exist yet would be made by opening it: a dry run leaves no trace.
  const path = sqlitePath(config.databaseUrl);
  if (path !== null && path !== ':memory:' && !existsSync(path)) return [...ALL_MIGRATIONS];
  const database = await connect(config.databaseUrl, { ...connectOptions(config), sqliteReaders: 0 });
  try {
    const newer = await unknownMigrations(database);
    if (newer.length > 0) throw new NewerDatabaseError(newer);
    return await pendingMigrations(database);
  } finally {
    await database.close();
  }
}

export interface OpenOptions {
  logger?: Logger;
  clock?: Clock;
  resolver?: Resolver;
  /**
   * A command that changes what a database holds (admin create, token create, admin-token create, prune) opens only
   * a SQLite database that exists: a mistyped path made a new empty database there (and a key beside it), and the
   * token or admin went into it, working nowhere, with status 0. `svc serve` and `svc migrate` make a new one.
   */
  existing?: boolean;
}

/**
 * Opens everything a process needs, in order: database, migrations, the secret key (checked against the
 * fingerprint stored with the data, so a wrong key stops the start instead of breaking every delivery later).
 */
export async function openContext(config: Config, options: OpenOptions = {}): Promise<Context> {
  const logger = options.logger ?? createLogger(config);
  const file = sqlitePath(config.databaseUrl);
  if (options.existing && file !== null && file !== ':memory:' && !existsSync(file)) {
    throw new ConfigError('SVC_DATABASE_URL', `names no database (${file} does not exist): svc serve or svc migrate makes one; this command works on an existing one`);
  }
  const key = resolveSecretKey(config);
  const database = await connect(config.databaseUrl, connectOptions(config));
  try {
    const applied = await migrateToLatest(database, () => logger.info('another svc process is applying migrations to this database; waiting for it'));
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    const box = new SecretBox(key);
    const stored = (await getMeta(database.db, 'secret_key_fingerprint')) ?? (await putMetaOnce(database.db, 'secret_key_fingerprint', box.fingerprint()));
    if (stored !== box.fingerprint()) {
      throw new ConfigError('SVC_SECRET_KEY', 'does not match the key this database was written with; svc refuses to start rather than lose every webhook secret');
    }
    // Processes sharing a database time leases by its clock (see database-clock.ts); one process needs no anchor.
    const clock = options.clock ?? (database.caps.sharedByProcesses ? await databaseClock(database) : systemClock);
    return { config, database, clock, box, logger, resolver: options.resolver ?? createDeliveryResolver({ timeoutMs: config.dnsTimeoutMs }) };
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }
}

export function deliveryClientOptions(config: Config, resolver: Resolver, clock?: Clock): DeliveryClientOptions {
  const ca = config.webhookCaFile ? extraCertificates(config.webhookCaFile) : undefined;
  return {
    resolver,
    allow: config.webhookAllowCidrs,
    ca,
    connectionsPerOrigin: config.webhookTargetConcurrency,
    timeoutMs: config.webhookTimeoutMs,
    clock,
  };
}

export interface Running {
  app: FastifyInstance | null;
  worker: DeliveryWorker | null;
  setupLink: string | null;
  url: string | null;
  stop(): Promise<void>;
}

/**
 * SVC_PORT=0 ("a free one") with the public URL left to its default (`http://<host>:<port>`): the port is chosen
 * before anything uses the URL (the setup link, the Origin check, the OpenAPI servers), so they name the port the API
 * answers on, not port 0. The port is free when chosen; should another process take it in the moment before svc
 * listens, the start fails with EADDRINUSE rather than serve under a wrong URL.
 */
async function withChosenPort(ctx: Context): Promise<Context> {
  const { config } = ctx;
  if (config.port !== 0 || new URL(config.publicUrl).port !== '0') return ctx;
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, config.host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const publicUrl = new URL(config.publicUrl);
  publicUrl.port = String(port);
  return { ...ctx, config: Object.freeze({ ...config, port, publicUrl: publicUrl.origin }) };
}

/** `svc serve` (API + worker), `svc serve --no-worker`, `svc worker`: the same parts, some left out. */
export async function startProcess(given: Context, parts: { api: boolean; worker: boolean; sender?: DeliverySender }): Promise<Running> {
  const ctx = parts.api ? await withChosenPort(given) : given;
  // First: a bad OTEL_* value stops the start before anything runs; without an endpoint nothing of OTel is loaded.
  const tracing = await startTracing(process.env, ctx.logger);
  // Only a process that serves the API has /metrics (docs/production.md): one without keeps no registry and counts
  // nothing, and loads no default metric (their GC and event-loop observers ran in every worker for no reader).
  const registry = parts.api ? await createRegistry() : null;
  const metrics = registry ? registerWebhookMetrics(registry, ctx.database, ctx.clock) : null;
  let worker: DeliveryWorker | null = null;
  let client: ReturnType<typeof createDeliveryClient> | null = null;
  let brokers: BrokerPool | null = null;
  let app: FastifyInstance | null = null;
  let url: string | null = null;
  let setupLink: string | null = null;
  let stopMaintenance: (() => void) | null = null;
  // Every process may prune; the lease lets one at a time (retention.ts).
  const stopRetention = startRetention(ctx, registry ? registerRetentionMetrics(registry) : () => {});
  if (parts.worker) {
    const https = parts.sender ?? (client = createDeliveryClient(deliveryClientOptions(ctx.config, ctx.resolver, ctx.clock)));
    // Broker connections live in the processes that deliver (SPEC §14); they connect in the background from here on.
    brokers = new BrokerPool(ctx.config.brokers, { timeoutMs: ctx.config.webhookTimeoutMs, logger: ctx.logger, limits: { concurrency: ctx.config.webhookConcurrency } });
    if (registry) registerBrokerMetrics(registry, brokers);
    brokers.start();
    worker = new DeliveryWorker(ctx, routeByType(https, brokers), metrics);
  }
  if (parts.api) {
    stopMaintenance = startMaintenance(ctx);
    // Loaded only here: a `svc worker` never reads the HTTP layer (Fastify, its schemas, the routes) off disk.
    const [{ buildApp }, { bootstrapAdmin }] = await Promise.all([import('./app.js'), import('./auth/setup.js')]);
    // The write path hands this process's new jobs straight to its own worker, when there is one.
    app = await buildApp(ctx, { registry: registry!, handoff: worker });
    // The admin exists before the port opens: a client that sees /readyz answer can log in at once.
    setupLink = await bootstrapAdmin(ctx);
    // @fastify/swagger's document of every route is made once, at its first use, in one go: 70–100 ms that the first
    // request for an OpenAPI document held the event loop. Made here, before the port opens, no request waits for it.
    await app.ready();
    app.swagger();
    url = await app.listen({ host: ctx.config.host, port: ctx.config.port });
    if (setupLink) {
      // The link is a credential: the operator reads it on stderr, and the JSON log (shipped, kept) never holds it.
      process.stderr.write(`\nsvc: first start: create the first admin at ${setupLink}\n     (valid for one hour, one use)\n\n`);
      ctx.logger.info({ setupLink: redactUrl(setupLink) }, 'first start: the setup link is on stderr (valid for one hour, one use)');
    }
  }
  await worker?.start();
  ctx.logger.info({ url, worker: parts.worker, database: ctx.database.caps.name }, 'svc started');
  return {
    app,
    worker,
    setupLink,
    url,
    async stop() {
      // Stop taking requests first, then let in-flight deliveries finish or hand them back, then close the pool.
      stopMaintenance?.();
      await stopRetention();
      if (app) await app.close();
      if (worker) await worker.stop();
      if (client) await client.close();
      if (brokers) await brokers.close();
      await ctx.database.close();
      // Last: the spans of everything above are exported before the process ends.
      await tracing.shutdown();
    },
  };
}

export type { Database };
