/**
 * Feed reads are budgeted in bytes as the rows are read, not after (SPEC §12). A read's first statement takes, for up
 * to `limit` events, the JSON of those whose stored payload is at most inlineBytes(budget, limit), and of bigger ones
 * only their size (octet_length reads neither SQLite's overflow pages nor PostgreSQL's TOAST). The read is cut by those
 * sizes, and only the big events it keeps are read afterwards, in one statement (feed-store.ts readEventJson). So:
 *
 * - the first statement returns at most about max(min(budget, 64 MiB), limit × INLINE_MIN_BYTES) bytes of JSON,
 *   whatever the events' sizes: no value the database builds (SQLite joins a page into one) nears its length limits;
 * - the second at most the budget, or one event when the first alone is over it.
 *
 * Small events (W9's 1.4 KB) take the first statement only, in the shape it had before budgets (one CASE per row).
 */
import { AppError } from '../errors.js';
import { compareFeed, positionKey, type FeedPosition } from './feed-position.js';

/** Below this, a payload is always read with its page: a read's first statement returns at most limit × this. */
export const INLINE_MIN_BYTES = 1024;

/** A big event's JSON besides its payload (the stored prefix of ~200 bytes, a brace), counted before it is read. */
export const BIG_EVENT_EXTRA_BYTES = 512;

/**
 * What a read's first statement may take whole, all events together: SVC_LIST_MAX_BYTES may be set up to 1 GiB, past
 * SQLite's 1e9-byte value limit for the joined page; beyond this the events are read by the second statement, a row each.
 */
export const INLINE_TOTAL_MAX_BYTES = 64 * 1024 * 1024;

/** Events whose stored payload is larger than this are read apart from their page, once the page has kept them. */
export const inlineBytes = (budget: number, limit: number): number =>
  Math.max(INLINE_MIN_BYTES, Math.floor(Math.min(budget, INLINE_TOTAL_MAX_BYTES) / Math.max(1, limit)));

/** How many of these events, in order, a page keeps: while their JSON and the commas between fit `budget`, at least one. */
export function keptWithin(sizes: readonly number[], budget: number): number {
  let kept = 0;
  let bytes = -1;
  for (const size of sizes) {
    if (kept > 0 && bytes + 1 + size > budget) break;
    bytes += 1 + size;
    kept++;
  }
  return kept;
}

/** The indexes of `positions` in feed order, or null when they are in order already (the usual case: no sort). */
export function feedOrder(positions: readonly FeedPosition[]): number[] | null {
  for (let i = 1; i < positions.length; i++) {
    if (compareFeed(positions[i]!, positions[i - 1]!) <= 0) return positions.map((_, k) => k).sort((x, y) => compareFeed(positions[x]!, positions[y]!));
  }
  return null;
}

/** One event of a read, in feed order: its JSON, or null for a big one not read yet, and then `size` is its estimate. */
export interface ReadEvent<J> {
  at: FeedPosition;
  json: J | null;
  size: number;
}

/**
 * The events a read keeps, with their JSON: cut at the budget by the first statement's sizes, the big ones among the
 * kept read (`readBig`, one statement), then cut again by their exact sizes. An event that has gone meanwhile was
 * pruned by retention (which records the position it pruned through in the same transaction): the read's cursor is
 * then behind what is retained, 410 as for any such cursor.
 */
export async function keepWithin<J>(
  events: ReadonlyArray<ReadEvent<J>>,
  budget: number,
  sizeOf: (json: J) => number,
  readBig: (at: FeedPosition[]) => Promise<Map<string, J>>,
): Promise<{ kept: Array<ReadEvent<J> & { json: J }>; bigBytes: number }> {
  const count = keptWithin(events.map((e) => e.size), budget);
  const kept = events.slice(0, count);
  const big = kept.filter((e) => e.json === null).map((e) => e.at);
  if (big.length === 0) return { kept: kept as Array<ReadEvent<J> & { json: J }>, bigBytes: 0 };
  const read = await readBig(big);
  let bigBytes = 0;
  const whole = kept.map((e) => {
    if (e.json !== null) return e as ReadEvent<J> & { json: J };
    const json = read.get(positionKey(e.at));
    if (json === undefined) throw new AppError('cursor_expired', 'Events after this cursor were pruned while they were read: re-read current state, then resume with after=now.');
    const size = sizeOf(json);
    bigBytes += size;
    return { at: e.at, json, size };
  });
  return { kept: whole.slice(0, keptWithin(whole.map((e) => e.size), budget)), bigBytes };
}
