import { describe, expect, it } from 'vitest';
import { feedEventPrefix } from '../../src/events/event-write.js';

const payload = '{"record":{"data":{"title":"naïve ☃ 😀","n":1}}}';

/** A feed event's stored prefix (migration 012): with the payload and `}`, the event exactly as JSON.stringify writes it. */
describe('feedEventPrefix', () => {
  it('makes the event\'s JSON up to its payload: escapes, milliseconds padded, UTC, the calendar', () => {
    const cases = [
      { createdAt: 1_700_000_000_001, occurredAt: '2023-11-14T22:13:20.001Z' },
      { createdAt: 1_709_251_199_999, occurredAt: '2024-02-29T23:59:59.999Z' },
    ];
    for (const { createdAt, occurredAt } of cases) {
      const e = { id: 'evt_01J0000000000000000000000', topic: 'record.updated', collection: 'notes', recordId: 'rec_é"x\\\u0001', createdAt };
      const json = `${feedEventPrefix(e)}${payload}}`;
      expect(json).toBe(JSON.stringify({ id: e.id, topic: e.topic, collection: e.collection, recordId: e.recordId, occurredAt, payload: JSON.parse(payload) }));
    }
  });
});
