import { createHash } from 'node:crypto';
import { randomToken } from '../lib/crypto.js';
import { envelopeOf } from '../webhooks/envelope.js';
import { signatureHeader } from '../webhooks/signing.js';
import { SECRET_PREFIX } from '../webhooks/targets.js';
import { readSse } from './event-stream-reader.js';

export interface ListenOptions {
  /** svc's base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  token: string;
  forwardTo: string;
  collections: readonly string[];
  topics: readonly string[];
  /** A feed cursor to start after; the present when absent. */
  after: string | null;
  secret: string;
  /** One line per forwarded event, and the start and reconnection notes. */
  print(line: string): void;
  /** Aborted on Ctrl-C: listen returns once the event being forwarded is done. */
  signal: AbortSignal;
}

/** A failure that reconnecting cannot fix: a bad token, an expired cursor. */
export class ListenError extends Error {}

export const newListenSecret = (): string => `${SECRET_PREFIX}${randomToken(32)}`;

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

/** The envelope of a forward, spliced around the event's payload text as received (the payload is the event's last field). */
function envelopeFor(event: StreamEvent, data: string): string {
  const payload = data.slice(data.indexOf('"payload":') + '"payload":'.length, -1);
  return envelopeOf({ id: deliveryIdFor(event.id), topic: event.topic, collection: event.collection, record_id: event.recordId }, payload);
}

async function forward(opts: ListenOptions, event: StreamEvent, data: string): Promise<string> {
  const body = envelopeFor(event, data);
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const res = await fetch(opts.forwardTo, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        // Shaped exactly like a delivery (SPEC §7), so a receiver that checks the agent takes both.
        'user-agent': 'svc-webhooks/1',
        'svc-delivery': deliveryIdFor(event.id),
        'svc-timestamp': String(timestamp),
        'svc-signature': signatureHeader([opts.secret], timestamp, body),
      },
      signal: AbortSignal.timeout(15_000),
    });
    await res.arrayBuffer().catch(() => undefined);
    return String(res.status);
  } catch (err) {
    return `failed (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message})`;
  }
}

const api = (opts: ListenOptions, path: string, query: URLSearchParams): string => {
  const url = new URL(path, opts.url.endsWith('/') ? opts.url : `${opts.url}/`);
  url.search = query.toString();
  return url.toString();
};

/** Where "the present" is, as a cursor: held from the start, so a connection dropped before any event loses nothing. */
async function headCursor(opts: ListenOptions): Promise<string> {
  const res = await fetch(api(opts, 'api/v1/events', new URLSearchParams({ after: 'now', limit: '1' })), {
    headers: { authorization: `Bearer ${opts.token}` },
    signal: opts.signal,
  });
  if (!res.ok) throw new ListenError(`svc answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { nextCursor: string }).nextCursor;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Follows svc's event stream and forwards each event to `forwardTo`, signed like a webhook delivery. Resumes after a
 * dropped connection from the last event forwarded (Last-Event-ID), so nothing is lost or repeated; gives up only on
 * what reconnecting cannot fix (401, 403, an expired cursor).
 */
export async function listen(opts: ListenOptions): Promise<void> {
  let cursor = opts.after ?? (await headCursor(opts));
  let retryMs = 2000;
  const query = new URLSearchParams();
  for (const c of opts.collections) query.append('collection', c);
  for (const t of opts.topics) query.append('topic', t);
  while (!opts.signal.aborted) {
    try {
      const res = await fetch(api(opts, 'api/v1/events/stream', query), {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${opts.token}`, 'last-event-id': cursor },
        signal: opts.signal,
      });
      if (res.status === 400 || res.status === 401 || res.status === 403) throw new ListenError(`svc answered ${res.status}: ${await res.text()}`);
      if (res.status !== 200 || !res.body) {
        opts.print(`svc answered ${res.status}; reconnecting in ${retryMs} ms`);
        await res.arrayBuffer().catch(() => undefined);
      } else {
        opts.print('connected: following the event stream');
        for await (const message of readSse(res.body as unknown as AsyncIterable<Uint8Array>, (ms) => (retryMs = ms))) {
          if (message.event === 'error') {
            const problem = JSON.parse(message.data) as { code?: string; detail?: string };
            if (problem.code === 'cursor_expired' || problem.code === 'unauthorized' || problem.code === 'forbidden') {
              throw new ListenError(`${problem.code}: ${problem.detail ?? ''}`);
            }
            opts.print(`svc ended the stream: ${problem.code}; reconnecting`);
            continue;
          }
          const event = JSON.parse(message.data) as StreamEvent;
          const status = await forward(opts, event, message.data);
          opts.print(`${event.topic} ${event.collection}/${event.recordId} ${event.id} -> ${status}`);
          if (message.id) cursor = message.id;
        }
        if (!opts.signal.aborted) opts.print(`the stream ended; reconnecting in ${retryMs} ms`);
      }
    } catch (err) {
      if (err instanceof ListenError) throw err;
      if (opts.signal.aborted) return;
      opts.print(`connection lost (${(err as Error).message}); reconnecting in ${retryMs} ms`);
    }
    await sleep(retryMs, opts.signal);
  }
}
