import type { CallOptions } from './records.js';

/** One page of an admin list. `nextCursor` is null on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Page size and position, as every admin list takes them. */
export interface PageOptions extends CallOptions {
  /** Items per page, 1…500; svc's default is 50. */
  limit?: number;
  /** The `nextCursor` of the previous page (of the same filters). */
  cursor?: string;
}

/** What the iterators take: the list's own options without the cursor, which they carry themselves. */
export type IterateOptions<O extends PageOptions> = Omit<O, 'cursor' | 'limit'> & {
  /** Items fetched per request, 1…500; default 500 (fewest round trips). */
  pageSize?: number;
};

/**
 * Every item of a list, a page at a time as the loop asks for more. svc's admin cursors are the last id seen, so no
 * item comes twice while others write; one created during the loop may or may not be reached.
 */
export async function* everyItem<T, O extends PageOptions>(
  list: (options: O) => Promise<Page<T>>,
  options: IterateOptions<O>,
): AsyncGenerator<T, void, undefined> {
  const { pageSize, ...rest } = options;
  let cursor: string | undefined;
  do {
    const page = await list({ ...rest, limit: pageSize ?? 500, cursor } as unknown as O);
    yield* page.items;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/** A time for svc's `date-time` parameters: a Date, or a string svc parses (RFC 3339). */
export type Instant = Date | string;

export const isoTime = (value: Instant | undefined): string | undefined =>
  value instanceof Date ? value.toISOString() : value;
