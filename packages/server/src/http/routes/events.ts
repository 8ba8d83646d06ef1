import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authenticateBearer } from '../../auth/api-tokens.js';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { decodeFeedCursor, feedCollections, feedPage, FeedWaker } from '../../events/feed.js';
import { COLLECTION_NAME } from '../../records/fields.js';
import { EventList, TopicSchema, errorResponses, ref } from '../schemas.js';

export const EVENTS_MAX_LIMIT = 1000;
export const EVENTS_MAX_WAIT_SECONDS = 30;

const FeedQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ maxLength: 400, description: 'A cursor from a previous page, or `now` for the present. Without it: the oldest retained event.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: EVENTS_MAX_LIMIT, default: 100 })),
    collection: Type.Optional(Type.Array(Type.String({ pattern: COLLECTION_NAME.source, maxLength: 63 }), { maxItems: 100, description: 'Only these collections (repeatable).' })),
    topic: Type.Optional(Type.Array(TopicSchema, { maxItems: 10, description: 'Only these topics (repeatable).' })),
    wait: Type.Optional(Type.Integer({ minimum: 0, maximum: EVENTS_MAX_WAIT_SECONDS, default: 0, description: 'Seconds to wait for a matching event when there is none yet.' })),
  },
  { additionalProperties: false },
);

/** The feed needs a token with events:read; which collections it may see is the token's, not the path's. */
const eventsAuth = (ctx: Context) =>
  async function feedAuth(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const result = await authenticateBearer(ctx, request.headers.authorization, '');
    if (result.kind !== 'ok') {
      reply.header('www-authenticate', result.kind === 'missing' ? 'Bearer realm="svc"' : 'Bearer realm="svc", error="invalid_token"');
      throw new AppError('unauthorized', result.kind === 'missing' ? 'Send Authorization: Bearer <token>.' : 'The bearer token is not valid.');
    }
    if (!result.token.scopes.includes('events:read')) throw new AppError('forbidden', 'This token lacks the events:read scope.');
    request.auth = { token: result.token };
  };

export const eventRoutes =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const waker = new FeedWaker(ctx);
    // A closing server answers its long-polls at once rather than holding the shutdown for up to 30 s.
    const closing = new AbortController();
    app.addHook('preClose', async () => {
      closing.abort();
      await waker.close();
    });
    app.addHook('onRequest', eventsAuth(ctx));

    app.get('/api/v1/events', {
      schema: {
        summary: 'The event feed: every committed record change, in one order, from a cursor; long-polls with `wait`',
        tags: ['events'],
        security: [{ bearerAuth: [] }],
        querystring: FeedQuery,
        response: { 200: ref(EventList), ...errorResponses(400, 401, 403) },
      },
    }, async (request, reply) => {
      const q = request.query;
      const json = await feedPage(ctx, {
        after: decodeFeedCursor(q.after),
        filter: { collections: feedCollections(request.auth.token!.collections, q.collection), topics: q.topic ?? null },
        limit: q.limit ?? 100,
        waitMs: (q.wait ?? 0) * 1000,
        maxBytes: ctx.config.listMaxBytes,
        signal: closing.signal,
        waker,
      });
      return reply.type('application/json; charset=utf-8').send(json as never);
    });
  };
