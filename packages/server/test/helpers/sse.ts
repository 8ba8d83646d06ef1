import { request, type IncomingMessage } from 'node:http';
/** A test client for Server-Sent Events over fetch: it keeps every frame it reads, parsed. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

export interface SseClient {
  status: number;
  headers: Headers;
  /** The body of a non-200 answer. */
  body: string;
  frames: SseFrame[];
  /** Frames that carry an event (data), errors included. */
  events(): SseFrame[];
  /** Resolves when the server ends the stream (or close() is called). */
  ended: Promise<void>;
  close(): void;
}

function parseFrame(block: string): SseFrame {
  const frame: SseFrame = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else {
      const at = line.indexOf(':');
      const field = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
      if (field === 'id' || field === 'event' || field === 'data' || field === 'retry') frame[field] = value;
    }
  }
  return frame;
}

/** Over node:http with a connection of its own (no pool), so closing a client leaves nothing open behind it. */
export async function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  const frames: SseFrame[] = [];
  const req = request(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } });
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
    req.end();
  });
  const responseHeaders = new Headers();
  for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') responseHeaders.set(k, v);
  res.setEncoding('utf8');
  if (res.statusCode !== 200) {
    let body = '';
    for await (const chunk of res) body += chunk;
    return { status: res.statusCode!, headers: responseHeaders, body, frames, events: () => [], ended: Promise.resolve(), close() {} };
  }
  const ended = new Promise<void>((resolve) => {
    let buffer = '';
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        frames.push(parseFrame(buffer.slice(0, end)));
        buffer = buffer.slice(end + 2);
      }
    });
    res.once('close', resolve);
    res.once('error', () => resolve());
  });
  return {
    status: 200,
    headers: responseHeaders,
    body: '',
    frames,
    events: () => frames.filter((f) => f.data !== undefined),
    ended,
    close: () => req.destroy(),
  };
}
