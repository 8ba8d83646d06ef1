import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import type { DeliveryJobsTable } from '../../db/tables.js';
import { AppError } from '../../errors.js';
import { iso } from '../../lib/clock.js';
import { decodeCursor, jsonBytes, pageWithin } from '../../lib/cursor.js';
import { idPattern } from '../../lib/ids.js';
import { listAttempts } from '../../webhooks/queue/attempts-store.js';
import { findEnvelope, findJob, listJobs } from '../../webhooks/queue/jobs-store.js';
import { retryDead } from '../../webhooks/queue/retry-dead.js';
import { jobView } from '../../webhooks/views.js';
import { DeliveryJob, DeliveryJobDetail, DeliveryJobList, ListQuery, errorResponses, ref } from '../schemas.js';

const IdParams = Type.Object({ id: Type.String({ pattern: idPattern('del').source }) });
const security = [{ adminSession: [], csrfToken: [] }];
const State = Type.Union([Type.Literal('pending'), Type.Literal('delivering'), Type.Literal('delivered'), Type.Literal('dead')]);

/** The same shape delivery.dead events carry (webhooks/views.ts). */
export const presentJob = jobView;

export const adminDeliveryRoutes =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();

    app.get('/admin/v1/deliveries', {
      schema: {
        operationId: 'listDeliveries',
        summary: 'Delivery jobs, newest first, filtered by target and state',
        tags: ['deliveries'],
        security,
        querystring: Type.Object({ ...ListQuery.properties, webhookId: Type.Optional(Type.String({ pattern: idPattern('wh').source })), state: Type.Optional(State) }, { additionalProperties: false }),
        response: { 200: ref(DeliveryJobList), ...errorResponses(400, 401, 403) },
      },
    }, async (request) => {
      const { limit = 50, cursor, webhookId, state } = request.query;
      const rows = (await listJobs(ctx.database.db, { webhookId, state }, decodeCursor(cursor, idPattern('del')), limit + 1)).map(presentJob);
      const { items, nextCursor } = pageWithin(rows, limit, ctx.config.listMaxBytes, (j) => j.id, jsonBytes);
      return { items: items as never, nextCursor };
    });

    app.get('/admin/v1/deliveries/:id', {
      schema: { operationId: 'getDelivery', summary: 'A job with its envelope and every attempt (oldest first)', tags: ['deliveries'], security, params: IdParams, response: { 200: ref(DeliveryJobDetail), ...errorResponses(401, 403, 404) } },
    }, async (request) => {
      const job = await findJob(ctx.database.db, request.params.id);
      if (!job) throw new AppError('not_found', 'No such delivery job.');
      const attempts = await listAttempts(ctx.database.db, job.id);
      return {
        ...presentJob(job),
        envelope: JSON.parse(await findEnvelope(ctx.database.db, job)) as Record<string, unknown>,
        attempts: attempts.map((a) => ({
          number: a.number,
          startedAt: iso(a.started_at),
          durationMs: a.duration_ms,
          statusCode: a.status_code,
          error: a.error_code === null ? null : { code: a.error_code, message: a.error_message ?? '' },
          responseSnippet: a.response_snippet,
          remoteAddress: a.remote_address,
          timings: { dnsMs: a.dns_ms, connectMs: a.connect_ms, tlsMs: a.tls_ms, firstByteMs: a.first_byte_ms },
        })),
      } as never;
    });

    app.post('/admin/v1/deliveries/:id/retry', {
      schema: { operationId: 'retryDelivery', summary: 'Send a dead job through one more full round of the schedule', tags: ['deliveries'], security, params: IdParams, response: { 200: ref(DeliveryJob), ...errorResponses(401, 403, 404, 409) } },
    }, async (request) => {
      const { db, caps } = ctx.database;
      const job = await findJob(db, request.params.id);
      if (!job) throw new AppError('not_found', 'No such delivery job.');
      const retried = await db.transaction().execute((trx) =>
        retryDead(trx, caps, { now: ctx.clock.now(), jobId: job.id, firstDelayMs: ctx.config.webhookRetrySchedule[0] ?? 0 }),
      );
      if (!retried) {
        if (job.state !== 'dead') throw new AppError('conflict', `Only a dead job can be retried; this one is ${job.state}.`);
        throw new AppError('conflict', 'The target of this job was deleted.');
      }
      await ctx.database.signal.notify().catch(() => {});
      return presentJob((await findJob(db, job.id))!) as never;
    });
  };
