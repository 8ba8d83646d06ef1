import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from '../../lib/prometheus.js';
import type { Context } from '../../context.js';
import { pendingMigrations } from '../../db/migrate.js';
import { RETRY_AFTER_SECONDS } from '../../db/database-errors.js';
import { AppError } from '../../errors.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';

export const healthRoutes =
  (ctx: Context, registry: Registry): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

    let migrated = false;
    const notReady = (detail: string) => new AppError('unavailable', detail, { headers: { 'retry-after': String(RETRY_AFTER_SECONDS.unavailable) } });
    // A probe gives up well before SVC_REQUEST_TIMEOUT_MS: a database that holds a statement without answering (a
    // hung server, a connection a network stopped carrying) is not ready, whatever the driver is still waiting for.
    const probeMs = Math.min(5_000, Math.floor(ctx.config.requestTimeoutMs / 2));
    app.get('/readyz', { schema: { hide: true } }, async () => {
      try {
        await withinMs(probeMs, async () => {
          await ctx.database.ping();
          // Once applied, migrations stay applied: skip the look-up on later probes.
          migrated ||= (await pendingMigrations(ctx.database)).length === 0;
        });
      } catch {
        throw notReady('The database does not answer.');
      }
      if (!migrated) throw notReady('Migrations are not applied yet.');
      return { status: 'ready' };
    });

    const expected = ctx.config.metricsToken === null ? null : sha256Hex(`Bearer ${ctx.config.metricsToken}`);
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      // Hashes of equal length compared in constant time: neither the token nor its length leaks by timing.
      if (expected !== null && !safeEqual(sha256Hex(request.headers.authorization ?? ''), expected)) {
        reply.header('www-authenticate', 'Bearer realm="svc"');
        throw new AppError('unauthorized', 'Send Authorization: Bearer <SVC_METRICS_TOKEN>.');
      }
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  };

/** Runs `work`, rejecting once `ms` have passed without it settling (the work itself goes on). */
async function withinMs(ms: number, work: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([work(), late]);
  } finally {
    clearTimeout(timer);
  }
}
