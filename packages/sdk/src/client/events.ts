import { errorFromResponse, SvcApiError } from './errors.js';
import type { components } from './openapi.js';
import { unwrap, type ApiClient, type CallOptions } from './records.js';
import { readSse } from './sse.js';

/** One event of the feed: a committed record change. `payload` is the webhook envelope's payload for it. */
export type FeedEvent = components['schemas']['Event'];
export type EventTopic = FeedEvent['topic'];
/** One page of the feed; `nextCursor` is never null. */
export type EventPage = components['schemas']['EventList'];

export interface EventFilter {
  /** Only these collections. */
  collection?: string | string[];
  /** Only these topics. */
  topic?: EventTopic | EventTopic[];
}

export interface EventPageOptions extends EventFilter, CallOptions {
  /** A cursor from before, or `now`; without it, the oldest retained event. */
  after?: string;
  /** 1…1000, svc's default 100. */
  limit?: number;
  /** Seconds (0…30) to wait for a matching event when there is none yet. */
  wait?: number;
}

export interface EventListOptions extends EventPageOptions {}

export interface EventStreamOptions extends EventFilter, CallOptions {
  /** Where to start: a cursor (an event's id from an earlier stream, or a feed cursor), or `now` (the default). */
  after?: string;
  /** Called before each reconnection, with the delay svc asked for and why the connection ended. */
  onReconnect?: (info: { delayMs: number; reason: unknown }) => void;
}

const list = <T>(v: T | T[] | undefined): T[] | undefined => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

/**
 * The feed followed from a cursor, page by page, with long-polls: iterate it with `for await`. `cursor` is where to
 * resume: it moves past a page only once you have taken every event of it, so store it after handling events and a
 * restart from it repeats at most the events of one page, never skips one.
 */
export class EventFeed implements AsyncIterable<FeedEvent> {
  /** Resume here (pass it as `after`); undefined until the first page when you gave no `after`. */
  cursor: string | undefined;

  constructor(
    private readonly events: EventsClient,
    private readonly options: EventListOptions,
  ) {
    this.cursor = options.after;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<FeedEvent> {
    const wait = this.options.wait ?? 30;
    for (;;) {
      if (this.options.signal?.aborted) return;
      let page: EventPage;
      try {
        page = await this.events.page({ ...this.options, after: this.cursor, wait });
      } catch (error) {
        if (this.options.signal?.aborted) return;
        throw error;
      }
      for (const event of page.items) yield event;
      this.cursor = page.nextCursor;
    }
  }
}

/**
 * The stream (Server-Sent Events, read with fetch) with reconnection: after a dropped connection it reconnects with
 * `Last-Event-ID`, so no event is lost or repeated. `lastEventId` is the id of the last event handed out: store it to
 * resume in a later run (as `after`). Ends when `signal` aborts; rejects with SvcApiError on what reconnecting cannot
 * fix (401, 403, an expired cursor).
 */
export class EventStream implements AsyncIterable<FeedEvent> {
  lastEventId: string | undefined;

  constructor(
    private readonly connect: (lastEventId: string | undefined) => Promise<Response>,
    private readonly options: EventStreamOptions,
  ) {
    this.lastEventId = options.after === 'now' ? undefined : options.after;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<FeedEvent> {
    let retryMs = 2000;
    const signal = this.options.signal;
    while (!signal?.aborted) {
      let reason: unknown = null;
      try {
        const response = await this.connect(this.lastEventId);
        if (response.status !== 200 || !response.body) {
          const body = await response.json().catch(() => undefined);
          const error = errorFromResponse(response, body);
          if (response.status < 500 && response.status !== 429) throw error;
          reason = error;
        } else {
          for await (const message of readSse(response.body as unknown as AsyncIterable<Uint8Array>, { onRetry: (ms) => (retryMs = ms) })) {
            if (message.event === 'error') {
              const problem: unknown = JSON.parse(message.data);
              const error = errorFromResponse(new Response(null, { status: (problem as { status?: number }).status ?? 500 }), problem);
              if (error.status < 500 && error.status !== 429) throw error;
              reason = error;
              break;
            }
            if (message.id) this.lastEventId = message.id;
            yield JSON.parse(message.data) as FeedEvent;
          }
          reason ??= new Error('the stream ended');
        }
      } catch (error) {
        if (signal?.aborted) return;
        if (error instanceof SvcApiError) throw error;
        reason = error;
      }
      this.options.onReconnect?.({ delayMs: retryMs, reason });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, retryMs);
        signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }
}

/** `client.events`: the feed as pages, as a followed iterator, and as a live stream. */
export class EventsClient {
  constructor(
    private readonly api: ApiClient,
    private readonly stream$: (query: URLSearchParams, headers: Record<string, string>, signal: AbortSignal | undefined) => Promise<Response>,
  ) {}

  /** `GET /api/v1/events`: one page. */
  page(options: EventPageOptions = {}): Promise<EventPage> {
    const query = {
      after: options.after,
      limit: options.limit,
      wait: options.wait,
      collection: list(options.collection),
      topic: list(options.topic),
    };
    return unwrap(this.api.GET('/api/v1/events', { params: { query }, signal: options.signal }));
  }

  /** Every event from `after` on, following the feed as it grows (long-polls of `wait` seconds, default 30). */
  list(options: EventListOptions = {}): EventFeed {
    return new EventFeed(this, options);
  }

  /** `GET /api/v1/events/stream`: live, from the present unless `after`, reconnecting from the last event. */
  stream(options: EventStreamOptions = {}): EventStream {
    const query = new URLSearchParams();
    for (const c of list(options.collection) ?? []) query.append('collection', c);
    for (const t of list(options.topic) ?? []) query.append('topic', t);
    if (options.after === 'now') query.set('after', 'now');
    return new EventStream(
      (lastEventId) => this.stream$(query, lastEventId ? { 'last-event-id': lastEventId } : {}, options.signal),
      options,
    );
  }
}
