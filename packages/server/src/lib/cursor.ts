import { AppError } from '../errors.js';

/**
 * Cursors are opaque to clients: base64url of the last key seen. Decoding checks the key's shape, so a
 * forged cursor is an `invalid_query`, never a database error.
 */
export const encodeCursor = (lastKey: string): string => Buffer.from(JSON.stringify({ after: lastKey })).toString('base64url');

export function decodeCursor(raw: string | undefined, shape: RegExp): string | null {
  if (raw === undefined || raw === '') return null;
  let after: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,400}$/.test(raw)) throw new Error('not base64url');
    after = (JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { after?: unknown }).after;
  } catch {
    after = undefined;
  }
  if (typeof after !== 'string' || !shape.test(after)) {
    throw new AppError('invalid_query', 'The cursor is not one this service issued.', { errors: [{ path: 'cursor', message: 'unknown cursor' }] });
  }
  return after;
}

/** Fetch one row more than asked: its presence says whether a next page exists. */
export function page<T>(rows: T[], limit: number, key: (row: T) => string): { items: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor(key(items[items.length - 1]!)) };
}
