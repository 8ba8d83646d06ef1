import { describe, expect, it } from 'vitest';
import { envelopeBytes, envelopeOf, envelopeTopic } from '../../src/webhooks/envelope.js';

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
