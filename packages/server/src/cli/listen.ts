import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../lib/clock.js';
import { envelopeOf } from '../webhooks/envelope.js';
import { signatureHeader } from '../webhooks/signing.js';
import { newSecret } from '../webhooks/targets.js';
import { readSse, SSE_LINE_MAX_BYTES, SseLineTooLong } from 'svc-sdk/sse';
import { ANSWER_READ_MAX_BYTES, apiUrl, delay, ListenError, problemText, readAtMost, retryWaitMs, sleep, startCursor } from './listen-start.js';

export interface ListenOptions {
  /** svc's base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  token: string;
  forwardTo: string;
  collections: readonly string[];
  topics: readonly string[];
  /** Where to start: after a feed cursor or an event id (`evt_…`, looked up in the feed); the present when absent or `now`. */
  after: string | null;
  secret: string;
  /** One line per forward (and per retry of one), and the start and reconnection notes. */
  print(line: string): void;
  /** Aborted on Ctrl-C: listen returns at once, its position still before any event not yet forwarded. */
  signal: AbortSignal;
  /** The most of a feed page's body read (listen-start.ts FEED_PAGE_READ_MAX_BYTES unless told). */
  pageMaxBytes?: number;
  /** What a forward's signature timestamp is read from (the system's by default). */
  clock?: Clock;
}

export { ListenError };

/** A secret of the same form as a target's (targets.ts newSecret): `whsec_` and the padded standard base64 of 32 bytes. */
export const newListenSecret = newSecret;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The delivery id of an event's forward: the event id's time part, then 16 characters from a hash of the event id.
 * The same event always gets the same `del_` id, so a receiver's de-duplication works across restarts of listen.
 */
export function deliveryIdFor(eventId: string): string {
  const time = eventId.slice(4, 14);
  const hash = createHash('sha256').update(`svc listen ${eventId}`).digest();
  let rest = '';
  for (let i = 0; i < 16; i++) rest += CROCKFORD[hash[i]! % 32];
  return `del_${time}${rest}`;
}

interface StreamEvent {
  id: string;
  topic: string;
  collection: string;
  recordId: string;
}

/** The server's `retry:` is obeyed within these bounds: a broken or hostile server can neither park listen for hours nor make it spin. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 60_000;

/** The wait before forwarding an event again after its n-th failed forward (n ≥ 1): 1 s, doubling, at most 30 s. */
const forwardRetryMs = retryWaitMs;

/** The envelope of a forward, spliced around the event's payload text as received (the payload is the event's last field). */
function envelopeFor(event: StreamEvent, data: string): string {
  const payload = data.slice(data.indexOf('"payload":') + '"payload":'.length, -1);
  return envelopeOf({ id: deliveryIdFor(event.id), topic: event.topic, collection: event.collection, record_id: event.recordId }, payload);
}

/** One forward: the local answer's status, or why there was none. Redirects are not followed, as deliveries never follow them. */
async function forward(opts: ListenOptions, event: StreamEvent, body: string): Promise<{ ok: boolean; status: string }> {
  const timestamp = Math.floor((opts.clock ?? systemClock).now() / 1000);
  // Ctrl-C or 15 s, whichever comes first; both let go of the forward's listener once it is over.
  const stop = new AbortController();
  const abort = () => stop.abort();
  const timer = setTimeout(abort, 15_000);
  opts.signal.addEventListener('abort', abort, { once: true });
  try {
    const res = await fetch(opts.forwardTo, {
      method: 'POST',
      body,
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        // Shaped exactly like a delivery (SPEC §7), so a receiver that checks the agent takes both.
        'user-agent': 'svc-webhooks/1',
        'svc-delivery': deliveryIdFor(event.id),
        'svc-timestamp': String(timestamp),
        'svc-signature': signatureHeader([opts.secret], timestamp, body),
      },
      signal: stop.signal,
    });
    // The status decides; the body is read only so the connection can be used again.
    await readAtMost(res, ANSWER_READ_MAX_BYTES);
    return { ok: res.status >= 200 && res.status < 300, status: String(res.status) };
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    return { ok: false, status: stop.signal.aborted && !opts.signal.aborted ? 'failed (no answer within 15 s)' : `failed (${cause})` };
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', abort);
  }
}

/**
 * Forwards an event until the receiver answers 2xx, waiting longer after each failure (SPEC §12): listen's position
 * moves past an event only once it got there. False when Ctrl-C came first.
 */
async function forwardUntilDone(opts: ListenOptions, event: StreamEvent, data: string, cursor: string): Promise<boolean> {
  const body = envelopeFor(event, data);
  const line = `${event.topic} ${event.collection}/${event.recordId} ${event.id} ->`;
  for (let failures = 1; ; failures++) {
    const { ok, status } = await forward(opts, event, body);
    if (opts.signal.aborted) return false;
    if (ok) {
      // The cursor resumes right after this event: `--after` takes it (or the event id).
      opts.print(`${line} ${status} (cursor ${cursor})`);
      return true;
    }
    opts.print(`${line} ${status}, retrying in ${delay(forwardRetryMs(failures))}`);
    await sleep(forwardRetryMs(failures), opts.signal);
    if (opts.signal.aborted) return false;
  }
}

/**
 * Follows svc's event stream and forwards each event to `forwardTo`, signed like a webhook delivery. Resumes after a
 * dropped connection from the last event forwarded (Last-Event-ID), so nothing is lost or repeated; gives up only on
 * what reconnecting cannot fix (400, 401, 403, an expired cursor). Returns the cursor to resume from.
 */
export async function listen(opts: ListenOptions): Promise<string> {
  let cursor = await startCursor(opts, opts.after, opts.print);
  let retryMs = 2000;
  const onRetry = (ms: number): void => {
    retryMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, ms));
    if (retryMs !== ms) opts.print(`svc asked to wait ${ms} ms before reconnecting; waiting ${delay(retryMs)} instead`);
  };
  const query = new URLSearchParams();
  for (const c of opts.collections) query.append('collection', c);
  for (const t of opts.topics) query.append('topic', t);
  while (!opts.signal.aborted) {
    try {
      const res = await fetch(apiUrl(opts.url, 'api/v1/events/stream', query), {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${opts.token}`, 'last-event-id': cursor },
        signal: opts.signal,
      });
      if (res.status === 400 || res.status === 401 || res.status === 403) {
        const hint = res.status === 400 && opts.after !== null ? ' (--after takes a cursor or an evt_ id that svc listen printed)' : '';
        throw new ListenError(`svc answered ${res.status}: ${await problemText(res)}${hint}`);
      }
      if (res.status !== 200 || !res.body) {
        opts.print(`svc answered ${res.status}; reconnecting in ${delay(retryMs)}`);
        await readAtMost(res, ANSWER_READ_MAX_BYTES);
      } else {
        opts.print('connected: following the event stream');
        for await (const message of readSse(res.body as unknown as AsyncIterable<Uint8Array>, { onRetry, maxLineBytes: SSE_LINE_MAX_BYTES })) {
          if (message.event === 'error') {
            const problem = JSON.parse(message.data) as { code?: string; detail?: string };
            if (problem.code === 'cursor_expired' || problem.code === 'unauthorized' || problem.code === 'forbidden') {
              throw new ListenError(`${problem.code}: ${problem.detail ?? ''}`);
            }
            opts.print(`svc ended the stream: ${problem.code}; reconnecting`);
            continue;
          }
          const event = JSON.parse(message.data) as StreamEvent;
          if (!(await forwardUntilDone(opts, event, message.data, message.id ?? cursor))) return cursor;
          if (message.id) cursor = message.id;
        }
        if (!opts.signal.aborted) opts.print(`the stream ended; reconnecting in ${delay(retryMs)}`);
      }
    } catch (err) {
      if (err instanceof ListenError) throw err;
      if (opts.signal.aborted) return cursor;
      const what = err instanceof SseLineTooLong ? `${err.message}; dropped the connection` : `connection lost (${(err as Error).message})`;
      opts.print(`${what}; reconnecting in ${delay(retryMs)}`);
    }
    await sleep(retryMs, opts.signal);
  }
  return cursor;
}
