import { describe, expect, it } from 'vitest';
import { envelopeBytes, envelopeOf, envelopeTopic, feedEventPrefix } from '../../src/webhooks/envelope.js';

const job = { id: 'del_01J0000000000000000000000', topic: 'record.updated', collection: 'notes', record_id: 'rec_é"x' };
const payload = '{"record":{"data":{"title":"naïve ☃ 😀","n":1}}}';

/** A job's body, made as bytes (claims, hand-offs) or as text (admin views, svc listen): the same envelope either way. */
describe('envelopeBytes', () => {
  it('is the UTF-8 of envelopeOf, from the payload\'s text or its bytes', () => {
    const text = envelopeOf(job, payload);
    expect(JSON.parse(text)).toEqual({ version: '1', id: job.id, topic: job.topic, collection: 'notes', recordId: job.record_id, payload: JSON.parse(payload) });
    expect(envelopeBytes(job, payload).equals(Buffer.from(text))).toBe(true);
    expect(envelopeBytes(job, Buffer.from(payload)).equals(Buffer.from(text))).toBe(true);
    expect(envelopeBytes(job, 'null').toString()).toBe(envelopeOf(job, 'null'));
  });

  it('envelopeTopic reads the topic from either form', () => {
    expect(envelopeTopic(envelopeBytes(job, payload))).toBe('record.updated');
    expect(envelopeTopic(envelopeOf(job, payload))).toBe('record.updated');
    expect(envelopeTopic(Buffer.from('not an envelope'))).toBe('');
  });
});

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
