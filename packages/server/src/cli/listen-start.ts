/** Where `svc listen` starts: the present, a feed cursor, or the position of an event id (SPEC §7, §12). */
import { LIST_MAX_BYTES_LIMIT } from '../config/schema.js';

/** A failure that reconnecting cannot fix: a bad token, an expired cursor, an unknown event. */
export class ListenError extends Error {}

export interface FeedAccess {
  /** svc's base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  token: string;
  signal: AbortSignal;
  /** The most of a feed page's body read (FEED_PAGE_READ_MAX_BYTES unless told: a test's proxy need not send a GiB). */
  pageMaxBytes?: number;
}

/** An event id as svc makes them (lib/ids.ts): never a cursor, which is base64url of JSON (`eyJ…`). */
const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The feed's page size while an event id is looked up: few requests, each page well within SVC_LIST_MAX_BYTES' default. */
const LOOKUP_PAGE = 1000;

export const apiUrl = (base: string, path: string, query: URLSearchParams): string => {
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  url.search = query.toString();
  return url.toString();
};

/**
 * How much of an answer listen reads when only its status or a problem document matters: a receiver's answer to a
 * forward, svc's refusal of the stream or of a feed page. As deliveries read a receiver's
 * (webhookResponseReadMaxBytes); the rest is cancelled. Read whole, a local server streaming its answer grew listen
 * by ~2 GB within the 15 s forward timeout, and a proxy in front of svc answering an endless error page had no bound.
 */
export const ANSWER_READ_MAX_BYTES = 64 * 1024;

/** The first `maxBytes` of an answer's body, whether there was more (then cancelled), or what came before it broke off. */
export async function readAtMost(res: Response, maxBytes: number): Promise<{ body: Buffer; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let read = 0;
  if (res.body) {
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        read += value.byteLength;
        if (read > maxBytes) {
          await reader.cancel();
          break;
        }
      }
    } catch {
      // An answer cut short or timed out: what came is all there is.
    }
  }
  return { body: Buffer.concat(chunks).subarray(0, maxBytes), cut: read > maxBytes };
}

/** How much of an answer that is no problem document a line of output shows. */
const SHOWN_TEXT_MAX_CHARS = 200;

/** A problem's words for a line of output: its code and detail, or the start of the body as it came. */
export async function problemText(res: Response): Promise<string> {
  const { body, cut } = await readAtMost(res, ANSWER_READ_MAX_BYTES);
  const text = body.toString('utf8');
  if (!cut) {
    try {
      const problem = JSON.parse(text) as { code?: string; detail?: string };
      if (problem.code) return `${problem.code}: ${problem.detail ?? ''}`;
    } catch {
      // Not a problem document: shown as it is.
    }
  }
  if (text.length <= SHOWN_TEXT_MAX_CHARS && !cut) return text;
  return `${text.slice(0, SHOWN_TEXT_MAX_CHARS)}… (${cut ? `over ${ANSWER_READ_MAX_BYTES / 1024} KiB, the rest not read` : `${body.length} bytes`})`;
}

/**
 * The most of a 200 feed page listen reads: the largest page svc can answer, whatever its SVC_LIST_MAX_BYTES. A page's
 * events stop within that setting, at most LIST_MAX_BYTES_LIMIT (1 GiB); one event alone may pass the setting, but not
 * that limit (a record of at most SVC_BODY_MAX_BYTES' 100 MiB and its previous state); around them only
 * `{"items":[…],"nextCursor":"…"}`, a cursor of a few dozen bytes. Read whole, a proxy answering 200 with an endless
 * body grew listen until it died.
 */
export const FEED_PAGE_READ_MAX_BYTES = LIST_MAX_BYTES_LIMIT + 64 * 1024;

interface FeedPage {
  items: Array<{ id: string }>;
  nextCursor: string;
}

/** The wait before asking again after the n-th failed request (n ≥ 1): 1 s, doubling, at most 30 s. */
export const retryWaitMs = (failures: number): number => Math.min(30_000, 1000 * 2 ** (failures - 1));

const size = (bytes: number): string => (bytes >= 1024 * 1024 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`);

export const delay = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

/** Waits `ms`, or less when `signal` aborts; leaves no listener behind either way (a long outage means many waits). */
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** Answers that waiting can fix (svc restarting, its database away, a rate limit); any other is final. */
const passing = (status: number): boolean => status === 429 || status >= 500;

/**
 * A page of the feed. svc not reachable yet, a 5xx or a 429 is asked again, 1 s after the first failure and doubling,
 * each failure on its own line, as the stream itself is reconnected: only what waiting cannot fix (a bad token, an
 * unknown cursor) stops listen. A 200 longer than any page svc sends is no page of svc's: cut there and asked again so.
 */
async function readPage(feed: FeedAccess, after: string | null, limit: number, print: (line: string) => void): Promise<FeedPage> {
  const query = new URLSearchParams({ limit: String(limit) });
  if (after !== null) query.set('after', after);
  for (let failures = 1; ; failures++) {
    let why: string;
    try {
      const res = await fetch(apiUrl(feed.url, 'api/v1/events', query), { headers: { authorization: `Bearer ${feed.token}` }, signal: feed.signal });
      if (res.ok) {
        const maxBytes = feed.pageMaxBytes ?? FEED_PAGE_READ_MAX_BYTES;
        const { body, cut } = await readAtMost(res, maxBytes);
        if (feed.signal.aborted) throw feed.signal.reason;
        if (!cut) return JSON.parse(body.toString('utf8')) as FeedPage;
        why = `svc answered ${res.status} with more than ${size(maxBytes)}, more than any page of its feed (a proxy in between?); the rest not read`;
      } else {
        why = `svc answered ${res.status}: ${await problemText(res)}`;
        if (!passing(res.status)) throw new ListenError(why);
      }
    } catch (err) {
      if (err instanceof ListenError || feed.signal.aborted) throw err;
      const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
      why = `could not reach svc (${cause})`;
    }
    print(`${why}; retrying in ${delay(retryWaitMs(failures))}`);
    await sleep(retryWaitMs(failures), feed.signal);
    if (feed.signal.aborted) throw feed.signal.reason;
  }
}

/**
 * The cursor to start from. The present is read as a cursor before the stream opens, so a connection dropped before
 * any event loses nothing. An event id (what each line of listen shows) is looked up in the feed: its position is
 * the cursor a page ending at it hands out.
 */
export async function startCursor(feed: FeedAccess, after: string | null, print: (line: string) => void): Promise<string> {
  if (after === null || after === 'now') return (await readPage(feed, 'now', 1, print)).nextCursor;
  if (!EVENT_ID.test(after)) return after;
  print(`looking up ${after} in the feed`);
  return positionOfEvent(feed, after, print);
}

/**
 * Pages through the feed, as this token sees it and without filters (the event may be outside this run's), from the
 * oldest retained event until the id appears; then reads again from that page's start exactly as many events as
 * lead to it, so that the page's cursor is the event's own position.
 */
async function positionOfEvent(feed: FeedAccess, eventId: string, print: (line: string) => void): Promise<string> {
  let after: string | null = null;
  for (;;) {
    const page = await readPage(feed, after, LOOKUP_PAGE, print);
    const at = page.items.findIndex((e) => e.id === eventId);
    if (at >= 0) return cursorThrough(feed, after, at + 1, print);
    if (page.items.length === 0) throw new ListenError(`--after ${eventId}: no such event in the feed (pruned, or not readable with this token)`);
    after = page.nextCursor;
  }
}

/** The cursor after the `count`-th event from `after`. A page cut short by its byte budget ends at its last event: go on from there. */
async function cursorThrough(feed: FeedAccess, after: string | null, count: number, print: (line: string) => void): Promise<string> {
  for (let left = count; ; ) {
    const page = await readPage(feed, after, left, print);
    if (page.items.length >= left) return page.nextCursor;
    if (page.items.length === 0) throw new ListenError('the feed changed while an event id was looked up; try again');
    left -= page.items.length;
    after = page.nextCursor;
  }
}
