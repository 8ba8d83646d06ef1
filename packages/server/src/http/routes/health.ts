import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { Context } from '../../context.js';
import { pendingMigrations } from '../../db/migrate.js';
import { AppError } from '../../errors.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';

export const healthRoutes =
  (ctx: Context, registry: Registry): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

    let migrated = false;
    app.get('/readyz', { schema: { hide: true } }, async () => {
      try {
        await ctx.database.ping();
        // Once applied, migrations stay applied: skip the look-up on later probes.
        migrated ||= (await pendingMigrations(ctx.database)).length === 0;
      } catch {
        throw new AppError('unavailable', 'The database does not answer.');
      }
      if (!migrated) throw new AppError('unavailable', 'Migrations are not applied yet.');
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
