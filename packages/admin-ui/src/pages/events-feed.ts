/**
 * The admin event feed as the events page reads it: the stream (/admin/v1/events/stream, with fetch: the session
 * cookie and X-Svc-CSRF, which EventSource cannot send) and, to start from a time, the pull feed
 * (/admin/v1/events). Both take the same cursors (docs/event-feed.md): a stream resumes after a pull page's
 * nextCursor as after one of its own event ids.
 */
import { api, ApiError, session } from '../api.js';
import type { FeedEvent, FeedPage, Problem } from '../types.js';

export interface FeedFilters {
  collections: string[];
  topic: string;
}

interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let event = '';
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
      } else if (!line.startsWith(':')) {
        const at = line.indexOf(':');
        const name = at < 0 ? line : line.slice(0, at);
        const text = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
        if (name === 'data') data.push(text);
        else if (name === 'event') event = text;
        else if (name === 'id') id = text;
      }
    }
  }
}

const query = (filters: FeedFilters) => {
  const params = new URLSearchParams();
  for (const c of filters.collections) params.append('collection', c);
  if (filters.topic) params.append('topic', filters.topic);
  return params.toString();
};

/**
 * One connection: events after `lastId` (or from the present) until the stream ends or `signal` aborts. Each event
 * comes with its cursor. A problem before or during the stream is thrown as an ApiError.
 */
export async function followStream(filters: FeedFilters, lastId: string | null, signal: AbortSignal, onEvent: (e: FeedEvent, cursor: string | null) => void, onOpen: () => void): Promise<void> {
  const headers: Record<string, string> = { Accept: 'text/event-stream' };
  if (session.csrfToken) headers['X-Svc-CSRF'] = session.csrfToken;
  if (lastId) headers['Last-Event-ID'] = lastId;
  const qs = query(filters);
  const response = await fetch(`/admin/v1/events/stream${qs ? `?${qs}` : ''}`, { headers, credentials: 'same-origin', cache: 'no-store', signal });
  if (!response.ok || !response.body) {
    const problem = (await response.json().catch(() => null)) as Problem | null;
    throw new ApiError(response.status, problem ?? { type: 'about:blank', title: 'Error', status: response.status, detail: `HTTP ${response.status}`, code: 'unknown', requestId: '' });
  }
  onOpen();
  for await (const message of readSse(response.body)) {
    // Lines already read after an abort (a pause) are not taken: the cursor stays at the last event shown.
    if (signal.aborted) return;
    if (message.event === 'error') {
      const problem = JSON.parse(message.data) as Problem;
      throw new ApiError(problem.status, problem);
    }
    onEvent(JSON.parse(message.data) as FeedEvent, message.id);
  }
}

/** Pages examined at most to find a time: 10 × 1,000 events (each page at most SVC_LIST_MAX_BYTES, 4 MiB by default). */
export const SCAN_PAGES = 10;
const SCAN_LIMIT = 1000;

export class TooFarError extends Error {}

/**
 * Where the feed reaches `since`: the first events (in feed order) that occurred at or after it, at most `max` of
 * them, and the cursor right after the last one given, to follow from there.
 *
 * The feed has no "from a time" (its positions are transaction order, and cursors are opaque: the UI must not make
 * one up): it is walked from its oldest retained event, a page of 1,000 at a time, the filters applied by the server
 * (so only matching events' bytes travel), until an event at or after `since`. Time order and feed order agree but for
 * transactions that overlapped (docs/event-feed.md), so the start is exact to within such an overlap. A time more
 * than SCAN_PAGES pages into the feed is refused (TooFarError): a cursor starts anywhere at once.
 */
export async function startAtTime(filters: FeedFilters, since: string, max: number): Promise<{ events: FeedEvent[]; cursor: string }> {
  const at = Date.parse(since);
  const q = { collection: filters.collections, topic: filters.topic ? [filters.topic] : [] };
  let after: string | undefined;
  for (let scanned = 0; scanned < SCAN_PAGES; scanned += 1) {
    const page = await api.get<FeedPage>('/events', { ...q, after, limit: SCAN_LIMIT });
    const first = page.items.findIndex((e) => Date.parse(e.occurredAt) >= at);
    if (first >= 0) {
      const events = page.items.slice(first, first + max);
      if (first + events.length === page.items.length) return { events, cursor: page.nextCursor };
      // The page goes on past what is shown: the same read, cut right after the last event shown, gives its cursor.
      const cut = await api.get<FeedPage>('/events', { ...q, after, limit: first + events.length });
      return { events, cursor: cut.nextCursor };
    }
    // An empty page is the head: nothing at or after `since` yet; follow from here.
    if (page.items.length === 0) return { events: [], cursor: page.nextCursor };
    after = page.nextCursor;
  }
  throw new TooFarError(`That time lies more than ${(SCAN_PAGES * SCAN_LIMIT).toLocaleString()} events into the feed, which has no search by time. Start from a cursor, narrow the collections or the topic, or choose a later time.`);
}
