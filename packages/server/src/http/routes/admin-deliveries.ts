import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { iso } from '../../lib/clock.js';
import { decodeCursor, jsonBytes, pageWithin } from '../../lib/cursor.js';
import { asId, idPattern } from '../../lib/ids.js';
import { attemptPages } from '../../webhooks/queue/attempts-store.js';
import { JsonBytes, jsonInSlices } from '../../lib/json-slices.js';
import { Pace } from '../../lib/turns.js';
import type { DeliveryAttemptsTable } from '../../db/tables.js';
import { findEnvelope, findListedJob, jobsStanding, listJobs, type ListedJob } from '../../webhooks/queue/jobs-store.js';
import { retryDead, retryDeadJobs } from '../../webhooks/queue/retry-dead.js';
import { jobView } from '../../webhooks/views.js';
import { DeliveryJob, DeliveryJobDetail, DeliveryJobList, DeliveryRetryResult, ListQuery, TopicSchema, errorResponses, ref } from '../schemas.js';

const IdParams = Type.Object({ id: Type.String({ pattern: idPattern('del').source }) });
const security = [{ adminSession: [], csrfToken: [] }];
const State = Type.Union([Type.Literal('pending'), Type.Literal('delivering'), Type.Literal('delivered'), Type.Literal('dead')]);
export const BULK_RETRY_MAX = 100;

const DeliveriesQuery = Type.Object(
  {
    ...ListQuery.properties,
    webhookId: Type.Optional(Type.String({ pattern: idPattern('wh').source })),
    state: Type.Optional(State),
    recordId: Type.Optional(Type.String({ pattern: idPattern('rec').source, description: 'Only the jobs of this record.' })),
    eventId: Type.Optional(Type.String({ pattern: idPattern('evt').source, description: 'Only the jobs of this event.' })),
    topic: Type.Optional(Type.Array(TopicSchema, { maxItems: 20, description: 'Only these topics (repeatable).' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Only jobs created at or after this time (RFC 3339).' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Only jobs created at or before this time (RFC 3339). A job whose id was made more than a minute after its createdAt (its process\'s clock stepped back that far) is not found by it.' })),
  },
  { additionalProperties: false },
);

/** An RFC 3339 time the schema let through, in Unix ms; one it did not (a leap second, 24:00) is `invalid_query`. */
function instant(text: string | undefined, parameter: string): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new AppError('invalid_query', `${parameter} is not an RFC 3339 time.`, { errors: [{ path: parameter, message: 'must be an RFC 3339 date-time' }] });
  return ms;
}

/**
 * A job as the admin API lists it, the same shape delivery.dead events carry (webhooks/views.ts), plus `heldBy`: a
 * pending job of a disabled target waits for it to be enabled, and its nextAttemptAt, long past, would say otherwise.
 */
export const presentJob = (j: ListedJob) => ({
  ...jobView(j),
  heldBy: (j.state === 'pending' || j.state === 'held') && j.target_enabled === 0 ? ('target_disabled' as const) : null,
});

const nullableInt = (v: number | null): number | null => (v === null ? null : Number(v));

/** An attempt as the job's detail shows it (schemas.ts Attempt; that order). */
const presentAttempt = (a: DeliveryAttemptsTable) => ({
  number: Number(a.number),
  startedAt: iso(Number(a.started_at)),
  durationMs: Number(a.duration_ms),
  statusCode: nullableInt(a.status_code),
  error: a.error_code === null ? null : { code: a.error_code, message: a.error_message ?? '' },
  responseSnippet: a.response_snippet,
  remoteAddress: a.remote_address,
  timings: { dnsMs: nullableInt(a.dns_ms), connectMs: nullableInt(a.connect_ms), tlsMs: nullableInt(a.tls_ms), firstByteMs: nullableInt(a.first_byte_ms) },
});

export const adminDeliveryRoutes =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const firstDelayMs = () => ctx.config.webhookRetrySchedule[0] ?? 0;

    app.get('/admin/v1/deliveries', {
      schema: {
        operationId: 'listDeliveries',
        summary: 'Delivery jobs, newest first, filtered by target, state, record, event, topic and creation time',
        tags: ['deliveries'],
        security,
        querystring: DeliveriesQuery,
        response: { 200: ref(DeliveryJobList), ...errorResponses(400, 401, 403) },
      },
    }, async (request) => {
      const { limit = 50, cursor, webhookId, state, recordId, eventId, topic } = request.query;
      const filter = { webhookId, state, recordId, eventId, topics: topic, since: instant(request.query.since, 'since'), until: instant(request.query.until, 'until') };
      const rows = (await listJobs(ctx.database.db, filter, decodeCursor(cursor, idPattern('del')), limit + 1)).map(presentJob);
      const { items, nextCursor } = pageWithin(rows, limit, ctx.config.listMaxBytes, (j) => j.id, jsonBytes);
      return { items: items as never, nextCursor };
    });

    app.get('/admin/v1/deliveries/:id', {
      schema: { operationId: 'getDelivery', summary: 'A job with its envelope and every attempt (oldest first)', tags: ['deliveries'], security, params: IdParams, response: { 200: ref(DeliveryJobDetail), ...errorResponses(401, 403, 404) } },
    }, async (request, reply) => {
      const job = await findListedJob(ctx.database.db, request.params.id);
      if (!job) throw new AppError('not_found', 'No such delivery job.');
      // Written in slices (as the admin OpenAPI document is): a job's attempts have no bound but its rounds, and the
      // envelope holds a record of up to SVC_BODY_MAX_BYTES. Each attempt becomes JSON bytes as it is read.
      const pace = new Pace();
      const attempts: JsonBytes[] = [];
      for await (const page of attemptPages(ctx.database.db, job.id, pace)) {
        for (const a of page) {
          attempts.push(JsonBytes.of(presentAttempt(a)));
          await pace.slice();
        }
      }
      // The envelope's text is the JSON body its attempts sent, written as it is.
      const envelope = new JsonBytes(Buffer.from(await findEnvelope(ctx.database.db, job)));
      const json = await jsonInSlices({ ...presentJob(job), envelope, attempts }, pace);
      return reply.type('application/json; charset=utf-8').send(json as never);
    });

    app.post('/admin/v1/deliveries/:id/retry', {
      schema: { operationId: 'retryDelivery', summary: 'Send a dead job through one more full round of the schedule', tags: ['deliveries'], security, params: IdParams, response: { 200: ref(DeliveryJob), ...errorResponses(401, 403, 404, 409) } },
    }, async (request) => {
      const { db, caps } = ctx.database;
      const job = await findListedJob(db, request.params.id);
      if (!job) throw new AppError('not_found', 'No such delivery job.');
      const retried = await db.transaction().execute((trx) => retryDead(trx, caps, { now: ctx.clock.now(), jobId: asId('del', job.id), firstDelayMs: firstDelayMs() }));
      if (!retried) {
        if (job.state !== 'dead') throw new AppError('conflict', `Only a dead job can be retried; this one is ${job.state}.`);
        throw new AppError('conflict', 'The target of this job was deleted.');
      }
      await ctx.database.signal.notify().catch(() => {});
      return presentJob((await findListedJob(db, job.id))!) as never;
    });

    app.post('/admin/v1/deliveries/retry', {
      schema: {
        operationId: 'retryDeliveries',
        summary: 'Send every listed dead job through one more full round of the schedule; the others are skipped, each with its reason',
        tags: ['deliveries'],
        security,
        body: Type.Object(
          { ids: Type.Array(Type.String({ pattern: idPattern('del').source }), { minItems: 1, maxItems: BULK_RETRY_MAX, description: `1…${BULK_RETRY_MAX} delivery job ids; a repeated id counts once.` }) },
          { additionalProperties: false },
        ),
        response: { 200: ref(DeliveryRetryResult), ...errorResponses(401, 403, 422) },
      },
    }, async (request) => {
      const { db, caps } = ctx.database;
      const ids = [...new Set(request.body.ids)].map((id) => asId('del', id));
      // One transaction: the jobs that were dead go back together, and the reasons are read from the same moment.
      const { revived, standing } = await db.transaction().execute(async (trx) => {
        const revived = new Set(await retryDeadJobs(trx, caps, { now: ctx.clock.now(), jobIds: ids, firstDelayMs: firstDelayMs() }));
        return { revived, standing: new Map((await jobsStanding(trx, ids.filter((id) => !revived.has(id)))).map((j) => [j.id, j])) };
      });
      if (revived.size > 0) await ctx.database.signal.notify().catch(() => {});
      const skipped = ids
        .filter((id) => !revived.has(id))
        .map((id) => {
          const job = standing.get(id);
          const reason = job === undefined ? 'not_found' : job.state !== 'dead' ? 'not_dead' : 'target_deleted';
          return { id, reason } as const;
        });
      return { retried: revived.size, skipped };
    });
  };
