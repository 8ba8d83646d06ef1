import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { iso } from '../../lib/clock.js';
import { decodeCursor, pageWithin } from '../../lib/cursor.js';
import { JsonBytes, jsonInSlices } from '../../lib/json-slices.js';
import { Pace } from '../../lib/turns.js';
import { idPattern } from '../../lib/ids.js';
import { storedEventJudges } from '../../records/subscription-filter.js';
import { recoverTarget, replayTarget, type Window } from '../../webhooks/recover-replay.js';
import { requireTarget } from '../../webhooks/targets.js';
import { listTargetIds } from '../../webhooks/targets-store.js';
import { attemptsPerTarget, HOUR_MS } from '../../webhooks/attempt-stats-store.js';
import { DEFAULT_HEALTH_WINDOW_MS, MAX_HEALTH_WINDOW_MS, OFF_MAIN_ATTEMPTS, targetHealth, targetsHealth, type TargetHealth } from '../../webhooks/target-health.js';
import { errorResponses } from '../schemas.js';

/** A target's health, and sending it what it missed (SPEC §10 "Target health", "Recover and replay"). */

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

const WindowBody = Type.Object({ since: DateTime, until: Type.Optional(DateTime) }, strict);

function windowOf(ctx: Context, body: { since: string; until?: string }): Window {
  const since = parseTime(body.since, '/since', 'validation_failed');
  const until = body.until === undefined ? ctx.clock.now() : parseTime(body.until, '/until', 'validation_failed');
  if (until < since) throw new AppError('validation_failed', 'until is before since.', { errors: [{ path: '/until', message: 'before since' }] });
  return { since, until };
}

/** The most targets a page of GET /admin/v1/webhooks/stats holds: 200 targets' week is 33,800 buckets (~1.9 MB). */
export const STATS_PAGE_MAX = 200;

/**
 * The most attempts a page of GET /admin/v1/webhooks/stats reads (beyond its first target): what bounds a page's
 * time, since its statements read every attempt of its targets' windows and sort them by duration. 200 targets' week
 * at 1,000 targets × 2,000,000 attempts is ~1,400,000 attempts, over SVC_QUERY_TIMEOUT_MS on a loaded machine.
 */
export const STATS_PAGE_ATTEMPTS = 250_000;

/** The most hourly buckets a page holds (targets × hours of the window): 400 targets' day, 59 targets' week. */
export const STATS_PAGE_BUCKETS = 10_000;
/**
 * At least the bytes of an item without its buckets (id, counts, rate, latencies, two times) and of one bucket
 * (`{"start":"…","succeeded":…,"failed":…}` with 16-digit counts).
 */
const ITEM_BYTES = 400;
const BUCKET_BYTES = 96;

/** The longest prefix of `ids` whose attempts stay within `budget`, and never fewer than one id. */
export function withinAttempts(ids: readonly string[], counts: ReadonlyMap<string, number>, budget: number): string[] {
  let total = 0;
  let n = 0;
  for (const id of ids) {
    total += counts.get(id) ?? 0;
    if (n > 0 && total > budget) break;
    n++;
  }
  return ids.slice(0, n);
}

/** A stats request's `since` as Unix ms: by default 24 hours ago; at most 7 days back and not in the future. */
function sinceOf(raw: string | undefined, now: number): number {
  const since = raw === undefined ? now - DEFAULT_HEALTH_WINDOW_MS : parseTime(raw, 'since', 'invalid_query');
  if (since < now - MAX_HEALTH_WINDOW_MS) {
    throw new AppError('invalid_query', 'since may be at most 7 days back.', { errors: [{ path: 'since', message: 'more than 7 days back' }] });
  }
  if (since > now) throw new AppError('invalid_query', 'since is in the future.', { errors: [{ path: 'since', message: 'in the future' }] });
  return since;
}

const time = (ms: number | null) => (ms === null ? null : iso(ms));
/** `at`: how a bucket's start is written; a page of targets shares one cache (their buckets start at the same hours). */
const present = (h: TargetHealth, at: (ms: number) => string = iso) => ({
  ...h,
  lastSuccessAt: time(h.lastSuccessAt),
  lastFailureAt: time(h.lastFailureAt),
  buckets: h.buckets.map((b) => ({ ...b, start: at(b.start) })),
});

function isoCache(): (ms: number) => string {
  const seen = new Map<number, string>();
  return (ms) => {
    let text = seen.get(ms);
    if (text === undefined) seen.set(ms, (text = iso(ms)));
    return text;
  };
}

export const adminWebhookHealthRoutes =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const timedOut = (err: unknown): never => {
      if (ctx.database.caps.isQueryTimeout(err)) throw new AppError('query_timeout', 'The statistics took longer than the query timeout; ask for a shorter window (since).');
      throw err;
    };

    // Registered beside /admin/v1/webhooks/:id: find-my-way takes a static segment before a parameter, and `stats` was
    // never a target id (ids match wh_…: the path answered 404 not_found before this route existed).
    app.get('/admin/v1/webhooks/stats', {
      schema: {
        operationId: 'listWebhookStats',
        summary: "Every live target's health since a time (default 24 h, at most 7 days back), a page of targets at a time",
        description:
          'Items in the order of GET /admin/v1/webhooks (by id; deleted targets absent, disabled ones included), each target\'s `stats` exactly what ' +
          'GET /admin/v1/webhooks/{id}/stats answers for the same `since`. A cursor of either list is good for the other. A page is bounded ' +
          '(at most 200 targets, 10,000 hourly buckets, 250,000 attempts) and computed in at most 15 statements.',
        tags: ['webhooks'],
        security,
        querystring: Type.Object(
          {
            since: Type.Optional(DateTime),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: STATS_PAGE_MAX, default: 50 })),
            cursor: Type.Optional(Type.String({ maxLength: 400 })),
          },
          strict,
        ),
        response: {
          200: Type.Object(
            {
              items: Type.Array(Type.Object({ webhookId: Type.String(), stats: TargetStats }, strict)),
              nextCursor: Nullable(Type.String()),
            },
            strict,
          ),
          ...errorResponses(400, 401, 403),
        },
      },
    }, async (request, reply) => {
      const now = ctx.clock.now();
      const since = sinceOf(request.query.since, now);
      const after = decodeCursor(request.query.cursor, idPattern('wh'));
      // Every target of a page has one bucket an hour: the page's answer is built and written on the event loop, so a
      // long window takes fewer targets (7 days: 59 a page).
      const hours = Math.floor(now / HOUR_MS) - Math.floor(since / HOUR_MS) + 1;
      const limit = Math.max(1, Math.min(request.query.limit ?? 50, Math.floor(STATS_PAGE_BUCKETS / hours)));
      const ids = await listTargetIds(ctx.database.db, after, limit + 1);
      const rowCheck = ctx.database.caps.query.rowCheck;
      // The page ends before the target that would take it past STATS_PAGE_ATTEMPTS (at least one target a page).
      const counts = await attemptsPerTarget(ctx.database.queries, { webhookIds: ids.slice(0, limit), from: since, to: now, rowCheck }).catch(timedOut);
      const page = withinAttempts(ids.slice(0, limit), counts, STATS_PAGE_ATTEMPTS);
      // An item's bytes bounded without writing it: every item has one bucket an hour. So the page is cut first, and
      // only its items are read and written.
      const cut = pageWithin(page, limit, ctx.config.listMaxBytes, (id) => id, () => ITEM_BYTES + hours * BUCKET_BYTES, ids.length > page.length);
      const attempts = cut.items.reduce((n, id) => n + (counts.get(id) ?? 0), 0);
      // SQLite's main connection checks its budget only as rows are read: the sorts after (by target and hour, by
      // duration) of a page over 250,000 attempts ran there for 100-170 ms. Past OFF_MAIN_ATTEMPTS, straight to a reader.
      const db = attempts > OFF_MAIN_ATTEMPTS ? ctx.database.offMain : ctx.database.queries;
      // Each chunk of targets becomes JSON as it is read (the objects it was built from die young), in its own turn.
      const at = isoCache();
      const items: JsonBytes[] = [];
      try {
        for await (const chunk of targetsHealth(db, { webhookIds: cut.items, since, now, rowCheck })) {
          for (const [id, health] of chunk) items.push(JsonBytes.of({ webhookId: id, stats: present(health, at) }));
        }
      } catch (err) {
        timedOut(err);
      }
      // The same text the route's serializer wrote, in slices: 10,000 buckets at once held the loop 140-180 ms.
      const json = await jsonInSlices({ items, nextCursor: cut.nextCursor }, new Pace());
      return reply.type('application/json; charset=utf-8').send(json as never);
    });

    app.get('/admin/v1/webhooks/:id/stats', {
      schema: {
        operationId: 'getWebhookStats',
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
      const since = sinceOf(request.query.since, now);
      // Its statements read every attempt of the window (a busy target's week: millions): where records queries run,
      // off SQLite's main thread and under SVC_QUERY_TIMEOUT_MS on both databases.
      return present(await targetHealth(ctx.database.queries, { webhookId: target.id, since, now, rowCheck: ctx.database.caps.query.rowCheck }, ctx.database.offMain).catch(timedOut));
    });

    app.post('/admin/v1/webhooks/:id/recover', {
      schema: {
        operationId: 'recoverWebhookDeliveries',
        summary: "Send every dead job of this target created in the window back to pending for one more round",
        tags: ['webhooks'],
        security,
        params: IdParams,
        body: WindowBody,
        response: { 200: Type.Object({ jobs: Type.Integer() }, strict), ...errorResponses(401, 403, 404, 409, 413, 415, 422) },
      },
    }, async (request) => recoverTarget(ctx, request.params.id, windowOf(ctx, request.body)));

    app.post('/admin/v1/webhooks/:id/replay', {
      schema: {
        operationId: 'replayWebhookEvents',
        summary: "Create a job for every retained event in the window that the target's subscription matches and that it has no job for",
        description: '`since` in the answer is the one used: moved forward to the delivered-jobs retention horizon if it was earlier.',
        tags: ['webhooks'],
        security,
        params: IdParams,
        body: WindowBody,
        response: { 200: Type.Object({ jobs: Type.Integer(), since: DateTime }, strict), ...errorResponses(401, 403, 404, 409, 413, 415, 422) },
      },
    }, async (request) => {
      const { jobs, since } = await replayTarget(ctx, request.params.id, windowOf(ctx, request.body), storedEventJudges());
      return { jobs, since: iso(since) };
    });
  };
