import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { adminTokenStillValid } from '../../auth/admin-tokens.js';
import { resolveSession } from '../../auth/sessions.js';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { namedCollections } from '../../events/feed.js';
import type { FeedRuntime } from '../../events/feed-runtime.js';
import { findFeedEventJson } from '../../events/feed-store.js';
import { idPattern } from '../../lib/ids.js';
import { listEventJobs } from '../../webhooks/queue/jobs-store.js';
import { SESSION_COOKIE } from '../auth.js';
import { adminOwner, answerPage, answerStream, feedSchema, streamSchema } from '../feed-answers.js';
import { EventDetail, errorResponses, ref } from '../schemas.js';
import { presentJob } from './admin-deliveries.js';

/** The admin twin (SPEC §7): every collection and svc's operational events (§10), for an admin session; the admin UI reads it with fetch. */
export const adminEventRoutes =
  (ctx: Context, feed: FeedRuntime): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/admin/v1/events', {
      schema: { operationId: 'listAdminEvents', ...feedSchema, summary: 'The event feed, every collection', security: [{ adminSession: [], csrfToken: [] }] },
    }, async (request, reply) => {
      const collections = namedCollections(request.query.collection);
      const json = await answerPage(ctx, feed, reply, request.query, { collections, owner: adminOwner(request.auth), operational: true });
      return reply.type('application/json; charset=utf-8').send(json as never);
    });
    app.get('/admin/v1/events/stream', {
      schema: streamSchema('streamAdminEvents', 'The event feed as Server-Sent Events, every collection', [{ adminSession: [], csrfToken: [] }]),
    }, async (request, reply) => {
      const cookie = request.cookies[SESSION_COOKIE] ?? '';
      const adminToken = request.auth.adminTokenValue;
      await answerStream(ctx, feed, request, request.query, reply, {
        collections: namedCollections(request.query.collection),
        operational: true,
        owner: adminOwner(request.auth),
        // Logging out (or the session expiring) ends the admin's streams. The look-up does not touch the session: a
        // stream left open is not activity, and the session's idle expiry runs on (SPEC §12). A revoked admin token
        // ends its streams the same way: at once in the process that revoked it, within a re-check elsewhere.
        recheck: adminToken
          ? async () => ((await adminTokenStillValid(ctx, adminToken)) ? null : new AppError('unauthorized', 'The admin token has been revoked.'))
          : async () => ((await resolveSession(ctx, cookie, { touch: false })) ? null : new AppError('unauthorized', 'The admin session has ended.')),
      });
    });
    app.get('/admin/v1/events/:id', {
      schema: {
        operationId: 'getAdminEvent',
        summary: 'One event as the feed shows it, with its delivery jobs (oldest first)',
        tags: ['events'],
        security: [{ adminSession: [], csrfToken: [] }],
        params: Type.Object({ id: Type.String({ pattern: idPattern('evt').source }) }),
        response: { 200: ref(EventDetail), ...errorResponses(401, 403, 404) },
      },
    }, async (request, reply) => {
      const { db, caps } = ctx.database;
      const json = await findFeedEventJson(db, caps, request.params.id);
      if (json === null) throw new AppError('not_found', 'No such event in the feed.');
      const deliveries = (await listEventJobs(db, request.params.id)).map(presentJob);
      // The event's own JSON as the feed sends it (its payload byte for byte, never parsed again), its jobs after it.
      return reply.type('application/json; charset=utf-8').send(`${json.slice(0, -1)},"deliveries":${JSON.stringify(deliveries)}}` as never);
    });
  };
