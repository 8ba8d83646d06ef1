import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { decodeFeedCursor, feedPage, refuseUnissued } from '../events/feed.js';
import type { FeedRuntime } from '../events/feed-runtime.js';
import { COLLECTION_NAME } from '../records/fields.js';
import type { RequestAuth } from './auth.js';
import { EventList, TopicSchema, errorResponses, ref } from './schemas.js';

/**
 * What the feed's routes share, public (routes/events.ts) and admin (routes/admin-events.ts): their query schemas, a
 * page answered (long-polls included), a stream admitted and handed to the fan-out, and whose place each takes.
 */

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

/** Who a stream belongs to, for SVC_STREAMS_PER_TOKEN and for ending its streams when the credential goes. */
export const tokenOwner = (tokenId: string): string => `token:${tokenId}`;
export const sessionOwner = (sessionIdHash: string): string => `session:${sessionIdHash}`;
export const adminTokenOwner = (adminTokenId: string): string => `admin-token:${adminTokenId}`;
/** An admin request's owner: its admin token (SPEC §16) when it came with one, else its session. */
export const adminOwner = (auth: RequestAuth): string => (auth.adminToken ? adminTokenOwner(auth.adminToken.id) : sessionOwner(auth.session!.idHash));

const StreamQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ maxLength: 400, description: 'Where to start: a cursor, or `now` (the default). `Last-Event-ID` wins over it.' })),
    collection: FeedQuery.properties.collection,
    topic: FeedQuery.properties.topic,
  },
  { additionalProperties: false },
);

export const streamSchema = (operationId: string, summary: string, security: Array<Record<string, string[]>>) => ({
  operationId,
  tags: ['events'],
  summary,
  security,
  querystring: StreamQuery,
  headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 400, description: 'The id of the last event received: the stream resumes after it.' })) }),
  produces: ['text/event-stream'],
  response: {
    200: {
      description:
        'Server-Sent Events: `retry: 2000`, then per event `id: <cursor>`, `event: <topic>`, `data: <event JSON>`; `: ping` at least every 15 s; an error after the start is `event: error` with a problem in `data`, then the end.',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    },
    ...errorResponses(400, 401, 403, 406, 429),
  },
});

/** The stream answers nothing but SSE (SPEC §7); a client that did not ask for it gets 406. */
function refuseUnlessEventStream(accept: string | undefined): void {
  const ranges = (accept ?? '').split(',').map((r) => r.split(';')[0]!.trim().toLowerCase());
  if (!ranges.includes('text/event-stream')) throw new AppError('not_acceptable', 'This route answers only Accept: text/event-stream.');
}

type StreamQueryValue = { after?: string; collection?: string[]; topic?: string[] };

/** Last-Event-ID wins over `after`; neither: the present. Also which of the two named it, for an error's path. */
function streamStart(request: FastifyRequest, query: StreamQueryValue) {
  const header = request.headers['last-event-id'];
  const fromHeader = typeof header === 'string' && header !== '' ? decodeFeedCursor(header, 'Last-Event-ID') : null;
  if (fromHeader !== null) return { start: fromHeader, parameter: 'Last-Event-ID' };
  return { start: decodeFeedCursor(query.after) ?? 'now', parameter: 'after' };
}

export async function answerStream(
  ctx: Context,
  feed: FeedRuntime,
  request: FastifyRequest,
  query: StreamQueryValue,
  reply: FastifyReply,
  opts: { collections: readonly string[] | null; operational?: boolean; owner: string; recheck: () => Promise<AppError | null> },
): Promise<void> {
  refuseUnlessEventStream(request.headers.accept);
  const { start, parameter } = streamStart(request, query);
  // Admitted once, holding its owner's place from here: a refusal below gives it back.
  const release = feed.fanout.admit(opts.owner);
  try {
    // A position beyond the newest event was never handed out: 400 before any byte of the stream (SPEC §12).
    if (start !== 'now') await refuseUnissued(ctx.database.db, start, null, parameter);
  } catch (err) {
    release();
    throw err;
  }
  reply.hijack();
  await feed.fanout.open({
    res: reply.raw,
    headers: reply.getHeaders() as OutgoingHttpHeaders,
    requestId: String(request.id),
    filter: { collections: opts.collections, topics: query.topic ?? null, operational: opts.operational === true },
    start,
    owner: opts.owner,
    release,
    recheck: opts.recheck,
  });
}

type FeedQueryValue = { after?: string; limit?: number; collection?: string[]; topic?: string[]; wait?: number };

/** A long-poll stops waiting when svc closes or its client leaves (its place then frees at once). */
function waitSignal(feed: FeedRuntime, reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => gone.abort());
  return AbortSignal.any([feed.closing, gone.signal]);
}

/** Takes one of the owner's places for a waiting long-poll, else 429 (SVC_LONG_POLLS_PER_TOKEN). */
const holdWait = (ctx: Context, feed: FeedRuntime, owner: string) => (): (() => void) => {
  const release = feed.waits.take(owner);
  if (release) return release;
  throw new AppError('rate_limited', `At most ${ctx.config.longPollsPerToken} long-polls per token may wait at once in one process; retry shortly.`, {
    headers: { 'retry-after': '1' },
  });
};

export const answerPage = async (ctx: Context, feed: FeedRuntime, reply: FastifyReply, q: FeedQueryValue, opts: { collections: readonly string[] | null; owner: string; operational?: boolean }) =>
  feedPage(ctx, {
    after: decodeFeedCursor(q.after),
    filter: { collections: opts.collections, topics: q.topic ?? null, operational: opts.operational === true },
    limit: q.limit ?? 100,
    waitMs: (q.wait ?? 0) * 1000,
    maxBytes: ctx.config.listMaxBytes,
    signal: q.wait ? waitSignal(feed, reply) : feed.closing,
    waker: feed.waker,
    holdWait: holdWait(ctx, feed, opts.owner),
    watch: feed.watch,
    // The next page is read in the turn after this one is written to the socket (the handler's answer is sent in a
    // microtask, before any immediate). Waiting for 'finish' (every byte flushed to the kernel) held the next read of
    // a 1.4 MB page until the client had pulled most of it: W9 SQLite 183-206k events/s against 210-242k, 2 runs each.
    readAhead: { pages: feed.readAhead, whenSent: (start) => void setImmediate(start) },
  });

export const feedSchema = {
  tags: ['events'],
  querystring: FeedQuery,
  response: { 200: ref(EventList), ...errorResponses(400, 401, 403, 410, 429) },
};
