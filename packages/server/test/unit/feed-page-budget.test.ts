import { describe, expect, it } from 'vitest';
import { feedOrder, INLINE_MIN_BYTES, INLINE_TOTAL_MAX_BYTES, inlineBytes, keepWithin, keptWithin, type ReadEvent } from '../../src/events/feed-budget.js';
import { positionKey, type FeedPosition } from '../../src/events/feed-position.js';

const events = ['{"n":1}', '{"n":"ü2"}', '{"n":3}', '{"n":44}'];
const sizes = events.map((e) => Buffer.byteLength(e));
const at = (i: number) => ({ tx: 7, position: 10 + i });

describe('the byte budget of a feed read (events/feed-budget.ts)', () => {
  it('keeps events while their UTF-8 bytes and the commas between fit, and always the first one', () => {
    expect(keptWithin(sizes, 1000)).toBe(4);
    const two = Buffer.byteLength(`${events[0]},${events[1]}`);
    expect(keptWithin(sizes, two)).toBe(2);
    expect(keptWithin(sizes, two - 1)).toBe(1);
    expect(keptWithin(sizes, 1)).toBe(1);
    expect(keptWithin([], 1)).toBe(0);
  });

  it('reads a payload with its page up to budget / limit bytes, never less than INLINE_MIN_BYTES', () => {
    expect(inlineBytes(4 * 1024 * 1024, 1000)).toBe(4194);
    expect(inlineBytes(4 * 1024 * 1024, 100)).toBe(41943);
    expect(inlineBytes(2048, 1000)).toBe(INLINE_MIN_BYTES);
    expect(inlineBytes(0, 0)).toBe(INLINE_MIN_BYTES);
    // A page budget past SQLite's value limit (SVC_LIST_MAX_BYTES up to 1 GiB) never makes the joined value that big.
    expect(inlineBytes(1024 ** 3, 1000)).toBe(Math.floor(INLINE_TOTAL_MAX_BYTES / 1000));
  });

  it('says when positions came out of feed order, and their order', () => {
    expect(feedOrder([at(0), at(1), at(2)])).toBeNull();
    expect(feedOrder([at(2), at(0), at(3), at(1)])).toEqual([1, 3, 0, 2]);
    // Another transaction's events come after a lower tx's, whatever their positions.
    expect(feedOrder([{ tx: 9, position: 1 }, { tx: 8, position: 5 }])).toEqual([1, 0]);
  });

  it('reads only the big events it keeps, in one call, and cuts again by their exact sizes', async () => {
    const big = 'x'.repeat(5000);
    const read: ReadEvent<string>[] = [
      { at: at(0), json: events[0]!, size: sizes[0]! },
      { at: at(1), json: null, size: 4000 }, // estimated below its real 5,000 bytes
      { at: at(2), json: null, size: 100 },
      { at: at(3), json: null, size: 9000 },
    ];
    const asked: FeedPosition[][] = [];
    const readBig = async (positions: FeedPosition[]) => {
      asked.push(positions);
      return new Map(positions.map((p) => [positionKey(p), p.position === 11 ? big : '{"small":1}']));
    };
    // By the estimates the first three fit 4,200 bytes; the fourth is never read. Read, the second is over: cut there.
    const { kept, bigBytes } = await keepWithin(read, 4200, (json) => Buffer.byteLength(json), readBig);
    expect(asked).toEqual([[at(1), at(2)]]);
    expect(kept.map((e) => e.at)).toEqual([at(0)]);
    expect(bigBytes).toBe(5000 + '{"small":1}'.length);
    // The first event is kept even when it alone is over the budget.
    const alone = await keepWithin([{ at: at(1), json: null, size: 4000 }], 10, (json) => json.length, readBig);
    expect(alone.kept).toEqual([{ at: at(1), json: big, size: 5000 }]);
  });

  it('is cursor_expired when a big event it kept has gone before it was read (retention pruned it meanwhile)', async () => {
    const read: ReadEvent<string>[] = [{ at: at(0), json: null, size: 10 }];
    await expect(keepWithin(read, 100, (json) => json.length, async () => new Map())).rejects.toMatchObject({ code: 'cursor_expired' });
  });
});
