import { describe, expect, it } from 'vitest';
import { keepInBudget } from '../../src/events/feed-store.js';

const events = ['{"n":1}', '{"n":"ü2"}', '{"n":3}', '{"n":44}'];
const sizes = events.map((e) => Buffer.byteLength(e));
const at = (i: number) => ({ tx: 7, position: 10 + i });

describe('keepInBudget (a feed page joined by the database)', () => {
  it('uses the joined value as it is when every event fits in order', () => {
    const joined = Buffer.from(events.join(','));
    const page = keepInBudget(joined, sizes, events.map((_, i) => at(i)), 1000);
    expect(page).toEqual({ items: joined, kept: 4, read: 4, last: at(3) });
    expect(page.items).toBe(joined);
  });

  it('cuts at the budget counting UTF-8 bytes and commas, keeping the first event even when it alone is over', () => {
    const joined = events.join(',');
    const two = Buffer.byteLength(`${events[0]},${events[1]}`);
    expect(keepInBudget(joined, sizes, events.map((_, i) => at(i)), two)).toEqual({ items: Buffer.from(`${events[0]},${events[1]}`), kept: 2, read: 4, last: at(1) });
    expect(keepInBudget(joined, sizes, events.map((_, i) => at(i)), two - 1).kept).toBe(1);
    expect(keepInBudget(joined, sizes, events.map((_, i) => at(i)), 1)).toMatchObject({ items: Buffer.from(events[0]!), kept: 1, last: at(0) });
  });

  it('puts a page the aggregate took out of feed order back in order, by the sizes', () => {
    const shuffled = [2, 0, 3, 1];
    const joined = shuffled.map((i) => events[i]).join(',');
    const page = keepInBudget(joined, shuffled.map((i) => sizes[i]!), shuffled.map(at), 1000);
    expect(page).toEqual({ items: Buffer.from(events.join(',')), kept: 4, read: 4, last: at(3) });
    // Another transaction's events come after a lower tx's, whatever their positions.
    const crossTx = keepInBudget(`${events[0]},${events[1]}`, [sizes[0]!, sizes[1]!], [{ tx: 9, position: 1 }, { tx: 8, position: 5 }], 1000);
    expect(crossTx).toEqual({ items: Buffer.from(`${events[1]},${events[0]}`), kept: 2, read: 2, last: { tx: 9, position: 1 } });
  });
});
