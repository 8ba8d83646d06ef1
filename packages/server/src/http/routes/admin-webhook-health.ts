import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { iso } from '../../lib/clock.js';
import { idPattern } from '../../lib/ids.js';
import { requireTarget } from '../../webhooks/targets.js';
import { DEFAULT_HEALTH_WINDOW_MS, MAX_HEALTH_WINDOW_MS, targetHealth } from '../../webhooks/target-health.js';
import { errorResponses } from '../schemas.js';

/** A target's health (SPEC §10 "Target health"); recover and replay live beside it. */

const IdParams = Type.Object({ id: Type.String({ pattern: idPattern('wh').source }) });
const security = [{ adminSession: [], csrfToken: [] }];
const DateTime = Type.String({ format: 'date-time' });
const strict = { additionalProperties: false } as const;
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const TargetStats = Type.Object(
  {
    attempts: Type.Object({ total: Type.Integer(), succeeded: Type.Integer(), failed: Type.Integer() }, strict),
    successRate: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    latencyMs: Type.Object({ p50: Nullable(Type.Integer()), p95: Nullable(Type.Integer()) }, { ...strict, description: 'Nearest-rank percentiles of every attempt duration in the window' }),
    lastSuccessAt: Nullable(DateTime),
    lastFailureAt: Nullable(DateTime),
    buckets: Type.Array(Type.Object({ start: DateTime, succeeded: Type.Integer(), failed: Type.Integer() }, strict), { description: 'Hourly, aligned to the hour, oldest first' }),
  },
  strict,
);

/** A time the client sent, as Unix ms; `path` names it in the problem. */
export function parseTime(value: string, path: string, code: 'invalid_query' | 'validation_failed'): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new AppError(code, `${path} is not a date-time.`, { errors: [{ path, message: 'not a date-time' }] });
  return ms;
}

export const adminWebhookHealthRoutes =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();

    app.get('/admin/v1/webhooks/:id/stats', {
      schema: {
        summary: "A target's attempts, success rate, latency and hourly buckets since a time (default 24 h, at most 7 days back)",
        tags: ['webhooks'],
        security,
        params: IdParams,
        querystring: Type.Object({ since: Type.Optional(DateTime) }, strict),
        response: { 200: TargetStats, ...errorResponses(400, 401, 403, 404) },
      },
    }, async (request) => {
      const target = await requireTarget(ctx, request.params.id);
      const now = ctx.clock.now();
      const since = request.query.since === undefined ? now - DEFAULT_HEALTH_WINDOW_MS : parseTime(request.query.since, 'since', 'invalid_query');
      if (since < now - MAX_HEALTH_WINDOW_MS) {
        throw new AppError('invalid_query', 'since may be at most 7 days back.', { errors: [{ path: 'since', message: 'more than 7 days back' }] });
      }
      if (since > now) throw new AppError('invalid_query', 'since is in the future.', { errors: [{ path: 'since', message: 'in the future' }] });
      const h = await targetHealth(ctx.database.db, { webhookId: target.id, since, now });
      const time = (ms: number | null) => (ms === null ? null : iso(ms));
      return {
        ...h,
        lastSuccessAt: time(h.lastSuccessAt),
        lastFailureAt: time(h.lastFailureAt),
        buckets: h.buckets.map((b) => ({ ...b, start: iso(b.start) })),
      };
    });
  };
