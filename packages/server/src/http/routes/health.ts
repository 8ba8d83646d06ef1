import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { Context } from '../../context.js';
import { pendingMigrations } from '../../db/migrate.js';
import { AppError } from '../../errors.js';

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

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
      reply.type(registry.contentType).send(await registry.metrics()),
    );
  };
