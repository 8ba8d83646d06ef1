import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authenticateBearer } from '../../auth/api-tokens.js';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { decodeFeedCursor, feedCollections, feedPage, FeedWaker } from '../../events/feed.js';
import { COLLECTION_NAME } from '../../records/fields.js';
import { refuseBearer } from '../auth.js';
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
    if (result.kind !== 'ok') refuseBearer(reply, result.kind);
    if (!result.token.scopes.includes('events:read')) throw new AppError('forbidden', 'This token lacks the events:read scope.');
    request.auth = { token: result.token };
  };

/** What every feed route of this app shares: one waker (one LISTEN connection), and the signal of the app's close. */
export interface FeedRuntime {
  waker: FeedWaker;
  closing: AbortSignal;
  close(): Promise<void>;
}

export function createFeedRuntime(ctx: Context): FeedRuntime {
  const waker = new FeedWaker(ctx);
  const closing = new AbortController();
  return {
    waker,
    closing: closing.signal,
    // A closing server answers its long-polls at once rather than holding the shutdown for up to 30 s.
    async close() {
      closing.abort();
      await waker.close();
    },
  };
}

type FeedQueryValue = { after?: string; limit?: number; collection?: string[]; topic?: string[]; wait?: number };

const answerPage = async (ctx: Context, feed: FeedRuntime, q: FeedQueryValue, collections: readonly string[] | null, operational = false) =>
  feedPage(ctx, {
    after: decodeFeedCursor(q.after),
    filter: { collections, topics: q.topic ?? null, operational },
    limit: q.limit ?? 100,
    waitMs: (q.wait ?? 0) * 1000,
    maxBytes: ctx.config.listMaxBytes,
    signal: feed.closing,
    waker: feed.waker,
  });

const feedSchema = {
  tags: ['events'],
  querystring: FeedQuery,
  response: { 200: ref(EventList), ...errorResponses(400, 401, 403, 410) },
};

export const eventRoutes =
  (ctx: Context, feed: FeedRuntime): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    app.addHook('onRequest', eventsAuth(ctx));
    app.get('/api/v1/events', {
      schema: {
        ...feedSchema,
        summary: 'The event feed: every committed record change, in one order, from a cursor; long-polls with `wait`',
        security: [{ bearerAuth: [] }],
      },
    }, async (request, reply) => {
      const json = await answerPage(ctx, feed, request.query, feedCollections(request.auth.token!.collections, request.query.collection));
      return reply.type('application/json; charset=utf-8').send(json as never);
    });
  };

/** The admin twin (SPEC §7): every collection and svc's operational events (§10), for an admin session; the admin UI reads it with fetch. */
export const adminEventRoutes =
  (ctx: Context, feed: FeedRuntime): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/admin/v1/events', {
      schema: { ...feedSchema, summary: 'The event feed, every collection', security: [{ adminSession: [], csrfToken: [] }] },
    }, async (request, reply) => {
      const json = await answerPage(ctx, feed, request.query, feedCollections(null, request.query.collection), true);
      return reply.type('application/json; charset=utf-8').send(json as never);
    });
  };
