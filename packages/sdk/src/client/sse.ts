// The one SSE reader of svc: the SDK's event stream and `svc listen` (packages/server/src/cli/listen.ts, through
// `svc-sdk/sse`) read with it. The SDK imports nothing from the server; the server imports this from the SDK.
/** One message of a Server-Sent Events stream; comments are dropped. */
export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/**
 * The longest line, and the longest message's data, taken from a server: 16 MiB (by default; `maxLineBytes`). svc's largest event (a record of
 * SVC_BODY_MAX_BYTES and its previous state, JSON-escaped) stays well below it; without a bound, a broken or hostile
 * server sending one endless line would grow the reader's memory until the process died.
 */
export const SSE_LINE_MAX_BYTES = 16 * 1024 * 1024;

/** The stream sent a line or message over the limit: the caller drops the connection (SPEC §12). */
export class SseLineTooLong extends Error {
  constructor(readonly limitBytes: number) {
    super(`the stream sent a line longer than ${limitBytes / (1024 * 1024)} MiB`);
    this.name = 'SseLineTooLong';
  }
}

export interface SseReadOptions {
  /** Hears the server's `retry:` (milliseconds, as sent: bounding it is the caller's business). */
  onRetry?: (ms: number) => void;
  maxLineBytes?: number;
}

/** Uint8Array pieces as one (Buffer.concat without Node's Buffer: the client runs wherever fetch does). */
function concat(pieces: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Parses an SSE body (the fields svc sends: id, event, data, retry) into messages. Lines may end in LF, CRLF or CR,
 * as the SSE format allows, also when a CRLF is split between two chunks. Lines are cut as bytes, each chunk scanned
 * once: a large event arriving in many chunks costs its length, not its length times its chunks.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, options: SseReadOptions = {}): AsyncGenerator<SseMessage> {
  const max = options.maxLineBytes ?? SSE_LINE_MAX_BYTES;
  const decoder = new TextDecoder();
  // The line being received, in pieces, while its end has not arrived.
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let skipLf = false;
  let first = true;
  let id: string | null = null;
  let event = '';
  let data: string[] = [];
  let dataBytes = 0;
  const ready: SseMessage[] = [];

  const takeLine = (bytes: Uint8Array): void => {
    if (bytes.length === 0) {
      if (data.length > 0) ready.push({ id, event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
      dataBytes = 0;
      return;
    }
    if (bytes[0] === 0x3a) return; // ':' a comment (svc's pings)
    const line = decoder.decode(bytes);
    const at = line.indexOf(':');
    const field = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
    if (field === 'data') {
      dataBytes += bytes.length;
      if (dataBytes > max) throw new SseLineTooLong(max);
      data.push(value);
    } else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) options.onRetry?.(Number(value));
  };

  for await (const chunk of body) {
    let start = 0;
    if (first && chunk.length > 0) {
      first = false;
      // A UTF-8 byte order mark before the first line is not part of it.
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) start = 3;
    }
    if (skipLf && chunk.length > 0) {
      skipLf = false;
      if (chunk[start] === LF) start += 1;
    }
    // The next LF and CR at or after `start`, each searched for again only once passed (-1: none left in the chunk).
    let lf = -2;
    let cr = -2;
    while (start < chunk.length) {
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end < 0) {
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
        if (pendingBytes > max) throw new SseLineTooLong(max);
        break;
      }
      const piece = chunk.subarray(start, end);
      if (pendingBytes + piece.length > max) throw new SseLineTooLong(max);
      takeLine(pending.length === 0 ? piece : concat([...pending, piece], pendingBytes + piece.length));
      pending = [];
      pendingBytes = 0;
      start = end + 1;
      // CRLF is one line end; its LF may be the next chunk's first byte.
      if (chunk[end] === CR) {
        if (start === chunk.length) skipLf = true;
        else if (chunk[start] === LF) start += 1;
      }
    }
    for (const message of ready.splice(0)) yield message;
  }
}
