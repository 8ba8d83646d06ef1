/** A feed position: events are ordered by (tx, position), see docs/event-feed.md. */
export interface FeedPosition {
  tx: number;
  position: number;
}

/** Feed order: negative when `a` comes first, positive when it comes after `b`, 0 for the same position. */
export const compareFeed = (a: FeedPosition, b: FeedPosition): number => a.tx - b.tx || a.position - b.position;

/** Whether `a` comes after `b` in the feed's order. */
export const beyond = (a: FeedPosition, b: FeedPosition): boolean => compareFeed(a, b) > 0;

/** A position as a map key. */
export const positionKey = (p: FeedPosition): string => `${p.tx}.${p.position}`;
