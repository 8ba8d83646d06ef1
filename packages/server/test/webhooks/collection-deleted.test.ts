import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEST_RECORD_ID } from '../../src/lib/ids.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, signatureValid, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

interface FeedEvent { id: string; topic: string; collection: string; recordId: string; payload: Record<string, unknown> }

/** SPEC §12 "Smaller rules": deleting a collection commits a `collection.deleted` event in the same transaction. */
describe.each(DIALECTS)('collection.deleted (%s)', (dialect) => {
  let rig: DeliveryRig;
  beforeEach(async () => {
    rig = await createDeliveryRig(dialect);
    await rig.collection('doomed', [{ name: 'title', type: 'text' }]);
  });
  afterEach(async () => rig?.close());

  const feed = async (token: string): Promise<FeedEvent[]> => {
    const res = await rig.app.inject({ method: 'GET', url: '/api/v1/events?limit=1000', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().items;
  };
  const subscribe = async (path: string, extra: Record<string, unknown>) => {
    const res = await rig.admin('POST', '/admin/v1/webhooks', { name: path, url: `${rig.receiver.url}/${path}`, topics: ['collection.deleted'], ...extra });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; secret: string };
  };
  const jobsOf = async (webhookId: string) =>
    (await rig.ctx.database.db.selectFrom('delivery_jobs').select(['topic', 'collection', 'record_id']).where('webhook_id', '=', webhookId).execute());

  it('force-deleting a collection with N records: one event in the feed, delivered to subscribed targets only', async () => {
    const doomedReader = await rig.token(['events:read'], ['doomed']);
    const issuesReader = await rig.token(['events:read'], ['issues']);
    const auth = { authorization: `Bearer ${await rig.token(['records:write'], ['doomed'])}` };
    for (const title of ['a', 'b', 'c']) {
      const res = await rig.app.inject({ method: 'POST', url: '/api/v1/collections/doomed/records', headers: auth, payload: { data: { title } } });
      expect(res.statusCode).toBe(201);
    }
    const all = await subscribe('all', {});
    // Filter and changedFields are about records: they do not narrow this event; collections does.
    const narrowed = await subscribe('narrowed', { collections: ['doomed'], filter: "title = 'never'", changedFields: ['title'], topics: ['collection.deleted', 'record.created'] });
    const elsewhere = await subscribe('elsewhere', { collections: ['issues'] });
    const unsubscribed = await rig.target(['record.created', 'record.deleted'], `${rig.receiver.url}/unsubscribed`);

    expect((await rig.admin('DELETE', '/admin/v1/collections/doomed?force=true')).statusCode).toBe(204);

    const events = (await feed(doomedReader)).filter((e) => e.topic === 'collection.deleted');
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({ collection: 'doomed', recordId: TEST_RECORD_ID });
    expect(Object.keys(event!.payload)).toEqual(['collection', 'records', 'occurredAt', 'eventId']);
    expect(event!.payload).toMatchObject({ collection: { name: 'doomed' }, records: 3, eventId: event!.id });
    // The public feed shows it to tokens that may read that collection, no other.
    expect((await feed(issuesReader)).filter((e) => e.topic === 'collection.deleted')).toEqual([]);

    // Jobs are made (or not) in the deleting transaction: the targets it does not concern have no job row at all.
    expect(await jobsOf(elsewhere.id)).toEqual([]);
    expect(await jobsOf(unsubscribed.id)).toEqual([]);
    for (const target of [all, narrowed]) {
      expect(await jobsOf(target.id)).toEqual([{ topic: 'collection.deleted', collection: 'doomed', record_id: TEST_RECORD_ID }]);
      const request = await waitFor(() => rig.receiver.requests.find((r) => r.path === `/${target === all ? 'all' : 'narrowed'}`), 'the delivery');
      expect(signatureValid(request.headers, request.body, [target.secret])).toBe(true);
      const envelope = JSON.parse(request.body);
      expect(envelope).toMatchObject({ version: '1', topic: 'collection.deleted', collection: 'doomed', recordId: TEST_RECORD_ID, payload: event!.payload });
    }
    // The collection and its records are gone; no record.deleted was made for them.
    expect((await rig.admin('GET', '/admin/v1/collections/doomed')).statusCode).toBe(404);
    const left = await rig.ctx.database.db.selectFrom('records').select('id').where('collection', '=', 'doomed').execute();
    expect(left).toEqual([]);
    expect((await feed(doomedReader)).filter((e) => e.topic === 'record.deleted')).toEqual([]);
  });

  it('an empty collection deleted without force is an event of 0 records; one that holds records is conflict and no event', async () => {
    const admin = rig.admin;
    const reader = await rig.token(['events:read']);
    const res = await rig.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: rig.auth, payload: { data: { title: 'kept' } } });
    expect(res.statusCode).toBe(201);
    const refused = await admin('DELETE', '/admin/v1/collections/issues');
    expect(refused.statusCode).toBe(409);
    expect((await admin('GET', '/admin/v1/collections/issues')).statusCode).toBe(200);
    expect((await admin('DELETE', '/admin/v1/collections/doomed')).statusCode).toBe(204);
    const deleted = (await feed(reader)).filter((e) => e.topic === 'collection.deleted');
    expect(deleted.map((e) => [e.collection, e.payload.records])).toEqual([['doomed', 0]]);
  });
});
