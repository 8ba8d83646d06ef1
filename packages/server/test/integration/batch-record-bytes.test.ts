import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * A batch's body is bounded by SVC_BODY_MAX_BYTES, but what its PATCHes and DELETEs change is not what they send:
 * 100 PATCHes of one field on records of 1 MB rewrote and answered over 100 MB in one transaction (4-12 s of a held
 * event loop on SQLite). The records they change may hold at most 16 × SVC_BODY_MAX_BYTES together, checked from
 * the rows' sizes before anything is written.
 */
describe.each(DIALECTS)('a batch over large records (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('is refused with 413 when the records it changes hold more than 16 × SVC_BODY_MAX_BYTES, and runs when they hold less', async () => {
    // A body of at most 64 KiB: the records changed may hold 1 MiB in all.
    t = await createTestApp(dialect, { SVC_BODY_MAX_BYTES: '65536' });
    await t.collection('docs', [{ name: 'title', type: 'text', required: true }, { name: 'body', type: 'text' }]);
    const auth = { authorization: `Bearer ${await t.token()}` };
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/docs/records', headers: auth, payload: { data: { title: `d${i}`, body: 'b'.repeat(60_000) } } });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().id);
    }
    const batch = (operations: unknown[]) => t!.app.inject({ method: 'POST', url: '/api/v1/batch', headers: auth, payload: { operations } });
    // 18 PATCHes of ~60 KB records: ~1.08 MB changed, over 1 MiB.
    const over = await batch(Array.from({ length: 18 }, (_, i) => ({ method: 'PATCH', collection: 'docs', id: ids[i % 4], data: { title: `p${i}` } })));
    expect(over.statusCode).toBe(413);
    expect(over.json()).toMatchObject({ code: 'payload_too_large', errors: [{ path: '/operations' }] });
    expect(over.headers['x-request-id']).toBeTruthy();
    const unchanged = await t.app.inject({ method: 'GET', url: `/api/v1/collections/docs/records/${ids[0]}`, headers: auth });
    expect(unchanged.json()).toMatchObject({ version: 1, data: { title: 'd0' } });
    // 16 PATCHes and a DELETE (~1.02 MB): within it, all done.
    const within = await batch([
      ...Array.from({ length: 16 }, (_, i) => ({ method: 'PATCH', collection: 'docs', id: ids[i % 3], data: { title: `q${i}` } })),
      { method: 'DELETE', collection: 'docs', id: ids[3] },
    ]);
    expect(within.statusCode, within.body).toBe(200);
    expect(within.json().results.map((r: { status: number }) => r.status)).toEqual([...Array.from({ length: 16 }, () => 200), 204]);
    // Creates count nothing: their data is in the body.
    const creates = await batch(Array.from({ length: 30 }, (_, i) => ({ method: 'POST', collection: 'docs', data: { title: `c${i}`, body: 'c'.repeat(1_000) } })));
    expect(creates.statusCode).toBe(200);
    const caps = await t.app.inject({ method: 'GET', url: '/api/v1/capabilities' });
    expect(caps.json().limits.batchMaxRecordBytes).toBe(16 * 65536);
    expect(t.violations).toEqual([]);
  });
});
