import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Context } from '../../context.js';
import type { FeedRuntime } from '../../events/feed-runtime.js';
import { bearerStillHolds } from '../bearer-auth.js';
import { answerPage, answerStream, feedSchema, streamSchema, tokenOwner } from '../feed-answers.js';

/** The public feed (SPEC §7): pages from a cursor, long-polled with `wait`, and the same live as Server-Sent Events. */
export const eventRoutes =
  (ctx: Context, feed: FeedRuntime): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    // A token with events:read; which collections it reads is the token's, narrowed by the query (bearer-auth.ts).
    const config = { bearer: { scope: 'events:read', collections: 'query' } } as const;
    app.get('/api/v1/events', {
      config,
      schema: {
        operationId: 'listEvents',
        ...feedSchema,
        summary: 'The event feed: every committed record change, in one order, from a cursor; long-polls with `wait`',
        security: [{ bearerAuth: [] }],
      },
    }, async (request, reply) => {
      const { token, collections } = request.auth;
      const json = await answerPage(ctx, feed, reply, request.query, { collections: collections!, owner: tokenOwner(token!.id) });
      return reply.type('application/json; charset=utf-8').send(json as never);
    });
    app.get('/api/v1/events/stream', {
      config,
      schema: streamSchema('streamEvents', 'The event feed as Server-Sent Events, live, resuming from Last-Event-ID', [{ bearerAuth: [] }]),
    }, async (request, reply) => {
      const { token, collections } = request.auth;
      const authorization = request.headers.authorization;
      await answerStream(ctx, feed, request, request.query, reply, {
        collections: collections!,
        owner: tokenOwner(token!.id),
        // A revoked or deleted token, or one that lost events:read, ends its streams.
        recheck: () => bearerStillHolds(ctx, authorization, 'events:read'),
      });
    });
  };
