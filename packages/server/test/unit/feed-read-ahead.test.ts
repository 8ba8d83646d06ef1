import { expect, it } from 'vitest';
import { FeedReadAhead, type FullPage } from '../../src/events/feed-read-ahead.js';
import { ManualClock } from '../../src/lib/clock.js';

const page = (n: number): FullPage => ({ bytes: Buffer.from(`page ${n}`), fullThrough: { tx: n, position: n } });

it("keeps a page read ahead for TTL_MS of the feed's clock, and takes it once", async () => {
  const clock = new ManualClock();
  const ahead = new FeedReadAhead(clock);
  ahead.start('a', async () => page(1));
  ahead.start('b', async () => page(2));
  expect(await ahead.take('a')).toEqual(page(1));
  expect(ahead.take('a')).toBeNull();
  clock.advance(FeedReadAhead.TTL_MS);
  // Expired on the clock, not after a wait: the read-ahead never reads the system time.
  expect(ahead.take('b')).toBeNull();
});

it('reads ahead at most MAX_PAGES pages at once; expired ones make room', async () => {
  const clock = new ManualClock();
  const ahead = new FeedReadAhead(clock);
  let reads = 0;
  const read = async () => (reads++, page(reads));
  for (let i = 0; i < FeedReadAhead.MAX_PAGES + 2; i++) ahead.start(`k${i}`, read);
  expect(reads).toBe(FeedReadAhead.MAX_PAGES);
  clock.advance(FeedReadAhead.TTL_MS);
  ahead.start('late', read);
  expect(reads).toBe(FeedReadAhead.MAX_PAGES + 1);
  expect(await ahead.take('late')).not.toBeNull();
});
