import { AppError } from '../errors.js';

/**
 * Cursors are opaque to clients: base64url of the last key seen. Decoding checks the key's shape, so a
 * forged cursor is an `invalid_query`, never a database error.
 */
export const encodeCursor = (lastKey: string): string => Buffer.from(JSON.stringify({ after: lastKey })).toString('base64url');

/** `parameter`: the query parameter that carried it, named in the error (SPEC §2). */
export function decodeCursor(raw: string | undefined, shape: RegExp, parameter = 'cursor'): string | null {
  if (raw === undefined || raw === '') return null;
  let after: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,400}$/.test(raw)) throw new Error('not base64url');
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { after?: unknown } | null;
    // Exactly what encodeCursor writes: a member more is not a cursor of ours.
    after = parsed !== null && typeof parsed === 'object' && Object.keys(parsed).length === 1 ? parsed.after : undefined;
  } catch {
    after = undefined;
  }
  if (typeof after !== 'string' || !shape.test(after)) {
    throw new AppError('invalid_query', 'The cursor is not one this service issued.', { errors: [{ path: parameter, message: 'unknown cursor' }] });
  }
  return after;
}

/** The bytes an item takes in a list answer that is serialized from objects (not spliced from stored text). */
export const jsonBytes = (item: unknown): number => Buffer.byteLength(JSON.stringify(item));

export const FRAME_OPEN = '{"items":[';
export const FRAME_CLOSE = '],"nextCursor":';
/**
 * The longest cursor the API hands out (SPEC §12 "Bounded cursors"), whatever a list's keys or sort values: keyset
 * cursors cut long sort values to stay within it (records/query/keyset-cursor.ts).
 */
export const CURSOR_MAX_CHARS = 1024;

/** The longest cursor decodeCursor takes (keys are ids and names, far shorter), with its quotes. */
const CURSOR_MAX_BYTES = 402;

/** A list answer as text around its items' own JSON texts; the same bytes as JSON.stringify of the list object. */
export const listJson = (items: readonly string[], nextCursor: string | null): string =>
  `${FRAME_OPEN}${items.join(',')}${FRAME_CLOSE}${nextCursor === null ? 'null' : JSON.stringify(nextCursor)}}`;

/**
 * An item of a list answer spliced from stored text: its head (ASCII: ids, a collection name, numbers, times), the
 * stored data (JSON text, written as it is) and the closing `}`. `dataBytes` is the data's UTF-8 length, counted once.
 */
export interface SplicedItem {
  readonly head: string;
  readonly data: string;
  readonly dataBytes: number;
}

/** The bytes an item takes in its list answer. */
export const splicedItemBytes = (item: SplicedItem): number => item.head.length + item.dataBytes + 1;

/**
 * A list answer of spliced items as bytes: what listJson gives for their texts (with `"totalCount"` last when there is
 * one), written straight into one buffer, which is sent as it is. As text, a page of 50 records was built from its
 * items' texts, joined into a second text, joined again to the response's head by Node's HTTP layer, flattened for
 * the socket and counted for its Content-Length: ~190 KB of the ~315 KB a W1 `limit=50` request allocated
 * (bench/README, twenty-third session).
 */
export function splicedListBytes(items: readonly SplicedItem[], nextCursor: string | null, totalCount: number | null = null): Buffer {
  const cursor = nextCursor === null ? 'null' : JSON.stringify(nextCursor);
  const tail = totalCount === null ? '}' : `,"totalCount":${totalCount}}`;
  let size = FRAME_OPEN.length + FRAME_CLOSE.length + Buffer.byteLength(cursor) + tail.length + Math.max(0, items.length - 1);
  for (const item of items) size += splicedItemBytes(item);
  const out = Buffer.allocUnsafe(size);
  let at = out.write(FRAME_OPEN, 0, 'latin1');
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    const item = items[i]!;
    const headBytes = out.write(item.head, at, 'utf8');
    // Counted by its length: a head that is not ASCII would be sent cut, or with stale bytes of the buffer after it.
    if (headBytes !== item.head.length) throw new Error(`a list item's head is not ASCII: ${JSON.stringify(item.head.slice(0, 80))}`);
    at += headBytes;
    at += out.write(item.data, at, 'utf8');
    out[at++] = 0x7d; // }
  }
  at += out.write(FRAME_CLOSE, at, 'latin1');
  at += out.write(cursor, at, 'utf8');
  at += out.write(tail, at, 'latin1');
  if (at !== size) throw new Error(`a list answer took ${at} bytes, not the ${size} counted`);
  return out;
}

/**
 * The rows for pageWithin, read `chunk` at a time after `after`: the read stops once it holds `limit + 1` rows, or a
 * row that the page's bytes cannot take (past `maxBytes` in all), so a page of large rows reads about what it can
 * send. API tokens naming 1,000 collections (~52 KB each): a page of limit=500 read and parsed 501 of them (26 MB)
 * to send 80, holding the event loop 505-670 ms.
 */
export async function readWithin<T>(
  read: (after: string | null, n: number) => Promise<T[]>,
  after: string | null,
  opts: { limit: number; maxBytes: number; chunk: number; key: (row: T) => string; bytes: (row: T) => number },
): Promise<T[]> {
  const rows: T[] = [];
  let bytes = 0;
  for (let from = after; rows.length <= opts.limit; ) {
    const got = await read(from, Math.min(opts.chunk, opts.limit + 1 - rows.length));
    for (const row of got) {
      rows.push(row);
      bytes += opts.bytes(row) + 1;
      if (bytes > opts.maxBytes) return rows;
    }
    if (got.length === 0 || rows.length > opts.limit) return rows;
    from = opts.key(got[got.length - 1]!);
  }
  return rows;
}

/** The fewest bytes a list page spends besides its items: the frame, with `"nextCursor":null`. */
export const LIST_FRAME_MIN_BYTES = FRAME_OPEN.length + FRAME_CLOSE.length + 'null}'.length;

/**
 * Paging for every list. Fetch one row more than `limit` (its presence says whether a next page exists); the page is
 * the longest run of at most `limit` rows whose list JSON stays within `maxBytes` (SVC_LIST_MAX_BYTES), given each
 * row's JSON size. A page always holds at least one item, or an item larger than the limit could never be read; a
 * page cut short by bytes has a nextCursor after its last item, so paging goes on where it stopped.
 */
export function pageWithin<T>(
  rows: readonly T[],
  limit: number,
  maxBytes: number,
  key: (row: T) => string,
  bytes: (row: T) => number,
  /** Rows exist beyond `rows` (the caller fetched them without their content); by default, rows beyond `limit`. */
  more = rows.length > limit,
  /** Turns key(row) into the cursor; by default `{after: key}`. */
  encode: (key: string) => string = encodeCursor,
  /** At least the bytes the row's cursor takes with its quotes, cheaply: the exact length is needed only near the limit. */
  cursorBound: (row: T) => number = () => CURSOR_MAX_BYTES,
): { items: T[]; nextCursor: string | null } {
  let total = LIST_FRAME_MIN_BYTES - 'null'.length;
  let count = 0;
  for (; count < Math.min(limit, rows.length); count++) {
    const next = total + bytes(rows[count]!) + (count > 0 ? 1 : 0);
    if (count > 0 && next + 'null'.length > maxBytes) break;
    // A page that is not the last ends with its cursor instead of null; encoded only near the limit (it costs).
    const isLast = count === rows.length - 1 && !more;
    if (count > 0 && !isLast && next + cursorBound(rows[count]!) > maxBytes && next + encode(key(rows[count]!)).length + 2 > maxBytes) break;
    total = next;
  }
  const items = rows.slice(0, count);
  return { items, nextCursor: count < rows.length || more ? encode(key(items[count - 1]!)) : null };
}
