import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { AppError } from '../errors.js';
import { ORIGIN } from './feed.js';
import { beyond, matchesFilter, type FeedFilter, type FeedPosition, type FeedRow } from './feed-store.js';
import { errorFrame, RETRY_FRAME, SSE_HEADERS } from './sse-frames.js';

export interface StreamRequest {
  res: ServerResponse;
  headers: OutgoingHttpHeaders;
  requestId: string;
  filter: FeedFilter;
  start: FeedPosition | 'now';
  /** Who holds the stream (a token, an admin session): the per-token limit and the re-check go by it. */
  owner: string;
  /** Gives back the owner's place that admission took (stream-admission.ts); called once, when the stream ends. */
  release(): void;
  /** The error that ends the stream when the credential no longer holds, else null. */
  recheck(): Promise<AppError | null>;
}

/**
 * The bytes handed to a client's socket that it has not read yet, as far as svc can see: what is still in Node's
 * buffers (a chunk leaves them when its write callback runs, the kernel having taken it). Beside the total, the
 * largest single event among them (a monotonic queue of the chunks' largest frames, oldest first).
 */
class Unread {
  bytes = 0;
  private next = 0;
  private readonly largest: Array<{ seq: number; size: number }> = [];

  /** Counts a chunk whose largest event is `largest` bytes; returns what its write callback must call. */
  add(size: number, largest: number): () => void {
    const seq = this.next++;
    this.bytes += size;
    while (this.largest.length > 0 && this.largest[this.largest.length - 1]!.size <= largest) this.largest.pop();
    this.largest.push({ seq, size: largest });
    return () => {
      this.bytes -= size;
      if (this.largest[0]?.seq === seq) this.largest.shift();
    };
  }

  get largestEvent(): number {
    return this.largest[0]?.size ?? 0;
  }
}

/** Catch-up writes frames in chunks of about this many bytes, waiting for 'drain' whenever the socket asks to. */
const CATCH_UP_CHUNK_BYTES = 64 * 1024;

/**
 * One client's event stream: its socket, and how much of what was written to it the client has not read. It is cut off (and resumes with Last-Event-ID) only when more than `limitBytes` that it
 * has not read wait for it besides the largest event among them (SPEC §12): an event larger than the limit is still
 * sent whole, and a client that reads keeps up however big the events are. Catching up, it writes a page's frames
 * only as fast as the client reads them (catchUp waits for 'drain'); live, the shared reader cannot wait for one
 * client, and the limit is what bounds the memory a slow one holds.
 */
export class StreamConnection {
  closed = false;
  live = false;
  /** The last position this stream has been handed (or, joining live, was level with). */
  position: FeedPosition = ORIGIN;
  private readonly unread = new Unread();
  private readonly waiting = new Set<() => void>();

  constructor(
    readonly req: StreamRequest,
    private readonly limitBytes: number,
    private readonly onClose: (s: StreamConnection) => void,
    private readonly onCutOff: (unreadBytes: number) => void,
  ) {
    req.res.on('close', () => this.finish());
    req.res.on('drain', () => this.wake());
  }

  writeHead(): void {
    const { res, headers } = this.req;
    res.writeHead(200, { ...headers, ...SSE_HEADERS });
    this.write(RETRY_FRAME);
  }

  /** Writes a chunk of whole frames (its largest `largest` bytes); false when the socket asks to wait for 'drain'. */
  write(chunk: Buffer, largest = chunk.length): boolean {
    if (this.closed) return false;
    const flushed = this.unread.add(chunk.length, largest);
    const more = this.req.res.write(chunk, flushed);
    if (this.unread.bytes - this.unread.largestEvent > this.limitBytes) {
      this.onCutOff(this.unread.bytes);
      this.req.res.destroy();
      this.finish();
      return false;
    }
    return more;
  }

  /**
   * Live: hands over the events of one read that are after this stream's position and match its filters, in one
   * write: `all` (the read's frames together, shared by every stream) when it takes every one. One write per read
   * rather than per event: a burst of k events costs each stream one chunk instead of k.
   */
  send(rows: readonly FeedRow[], frames: readonly Buffer[], all: Buffer, largest: number): void {
    const taken: Buffer[] = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (!beyond(row, this.position)) continue;
      this.position = row;
      if (matchesFilter(this.req.filter, row)) taken.push(frames[i]!);
    }
    if (taken.length === 0) return;
    if (taken.length === rows.length) this.write(all, largest);
    else this.write(Buffer.concat(taken), Math.max(...taken.map((f) => f.length)));
  }

  /** Catching up: the frames of one read, as fast as the client takes them. */
  async sendPaced(rows: readonly FeedRow[], frames: readonly Buffer[]): Promise<void> {
    let chunk: Buffer[] = [];
    let bytes = 0;
    let largest = 0;
    const flush = async () => {
      if (chunk.length === 0) return;
      const more = this.write(chunk.length === 1 ? chunk[0]! : Buffer.concat(chunk, bytes), largest);
      chunk = [];
      bytes = largest = 0;
      if (!more) await this.drained();
    };
    for (let i = 0; i < rows.length && !this.closed; i++) {
      const row = rows[i]!;
      if (!beyond(row, this.position)) continue;
      this.position = row;
      if (!matchesFilter(this.req.filter, row)) continue;
      const frame = frames[i]!;
      if (bytes > 0 && bytes + frame.length > CATCH_UP_CHUNK_BYTES) await flush();
      chunk.push(frame);
      bytes += frame.length;
      largest = Math.max(largest, frame.length);
    }
    await flush();
  }

  /** Resolves once the socket has taken what waits (or the stream ended); at once when nothing waits. */
  drained(): Promise<void> {
    if (this.closed || !this.req.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => this.waiting.add(resolve));
  }

  /** An error after the stream started: `event: error` with the problem, then the end (SPEC §7). */
  fail(err: AppError): void {
    if (this.closed) return;
    this.req.res.end(errorFrame(err, this.req.requestId));
    this.finish();
  }

  /** Ends the stream (svc is closing); a client that is not reading would hold the shutdown, and is dropped after a grace. */
  end(): void {
    if (this.closed) return;
    const res = this.req.res;
    res.end();
    if (!res.writableFinished) setTimeout(() => res.destroy(), END_GRACE_MS).unref();
    this.finish();
  }

  private wake(): void {
    for (const resolve of [...this.waiting]) resolve();
    this.waiting.clear();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.wake();
    this.onClose(this);
  }
}

/** How long a closing svc waits for a client to take the end of its stream. */
const END_GRACE_MS = 2000;
