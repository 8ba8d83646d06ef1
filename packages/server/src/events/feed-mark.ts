import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../db/dialects/types.js';
import type { Tables } from '../db/tables.js';
import type { FeedPosition } from './feed-position.js';
import { BEFORE_ALL, readFeedPositions } from './feed-store.js';

/**
 * The newest position below the horizon, or the one before every event: whatever commits from now on, and whatever
 * has committed but is not readable yet, comes after it. A check that reads a snapshot taken after this call then
 * finds what it missed among the events after it (collections.ts, making a field required).
 */
export async function feedMark(db: Kysely<Tables>, caps: DialectCapabilities): Promise<FeedPosition> {
  return (await readFeedPositions(db, caps, { after: BEFORE_ALL, limit: 0 })).head ?? BEFORE_ALL;
}
