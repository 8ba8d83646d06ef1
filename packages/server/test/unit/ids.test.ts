import { describe, expect, it } from 'vitest';
import { ID_PATTERN, idFloorAt, idTime, newIdAfter } from '../../src/lib/ids.js';

/** An id another process could have made at `ms`: the highest its millisecond allows. */
const elsewhere = (ms: number) => `${idFloorAt('del', ms).slice(0, 14)}${'Z'.repeat(16)}`;

describe('ids', () => {
  it('idTime reads back the millisecond an id was made at', () => {
    for (const ms of [0, 1, 1_700_000_000_123, 2 ** 40]) expect(idTime(elsewhere(ms))).toBe(ms);
  });

  it('newIdAfter sorts after an id of the same millisecond or later made elsewhere, and is made now otherwise', () => {
    // Far beyond any id this process made before (newId never goes back in time within a process).
    const now = Date.now() + 1_000_000_000;
    for (const previous of [elsewhere(now), elsewhere(now + 50)]) {
      const next = newIdAfter('del', previous, now);
      expect(next).toMatch(ID_PATTERN);
      expect(next > previous).toBe(true);
      expect(idTime(next)).toBe(idTime(previous) + 1);
    }
    expect(idTime(newIdAfter('del', elsewhere(now - 10_000), now + 100_000))).toBe(now + 100_000);
  });
});
