import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

const OPS_RECORD_ID = 'rec_00000000000000000000000000';

/** SPEC §10: auto-disable, 410 Gone, and the operational events webhook.disabled and delivery.dead. */
describe.each(DIALECTS)('operations: auto-disable and operational events (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  const answer = (statusByPath: Record<string, number>) =>
    rig.receiver.setHandler((req, res) => res.writeHead(statusByPath[req.url ?? ''] ?? 200).end('x'));
  const at = (path: string) => rig.receiver.requests.filter((r) => r.path === path);
  const make = async (name: string, path: string, topics: string[]) => {
    const res = await rig.admin('POST', '/admin/v1/webhooks', { name, url: `${rig.receiver.url}${path}`, topics });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string };
  };
  const adminFeed = async () => (await rig.admin('GET', '/admin/v1/events?limit=1000')).json().items as any[];

  it('a 410 disables its target at once (gone); the job waits pending; another subscriber gets webhook.disabled, the target itself never', async () => {
    rig = await createDeliveryRig(dialect);
    answer({ '/gone': 410 });
    const gone = await make('gone', '/gone', ['record.created', 'webhook.disabled']);
    const ops = await make('ops', '/ops', ['webhook.disabled']);
    expect((await rig.admin('GET', `/admin/v1/webhooks/${gone.id}`)).json()).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });

    const rec = await rig.createRecord({ title: 'a' });
    await waitFor(() => at('/ops').length === 1, 'webhook.disabled at the other subscriber');
    const target = (await rig.admin('GET', `/admin/v1/webhooks/${gone.id}`)).json();
    expect(target).toMatchObject({ enabled: false, disabledReason: 'gone' });
    expect(typeof target.disabledAt).toBe('string');

    const envelope = JSON.parse(at('/ops')[0]!.body);
    expect(envelope).toMatchObject({ topic: 'webhook.disabled', collection: '_svc', recordId: OPS_RECORD_ID });
    expect(Object.keys(envelope.payload)).toEqual(['webhook', 'reason', 'occurredAt', 'eventId']);
    expect(envelope.payload.reason).toBe('gone');
    expect(envelope.payload.webhook).toEqual(target);
    expect(envelope.payload.webhook.secret).toBeUndefined();
    expect(envelope.payload.eventId).toMatch(/^evt_/);

    const jobs = (await rig.admin('GET', `/admin/v1/deliveries?webhookId=${gone.id}`)).json().items;
    expect(jobs).toEqual([expect.objectContaining({ recordId: rec.id, state: 'pending', attemptCount: 1, lastError: expect.objectContaining({ code: 'http_status' }) })]);
    await rig.worker.whenIdle();
    // The disabled target got its one attempt, and nothing about itself.
    expect(at('/gone').map((r) => JSON.parse(r.body).topic)).toEqual(['record.created']);

    // In the admin feed, never in the public one.
    const feedEvent = (await adminFeed()).find((e) => e.topic === 'webhook.disabled');
    expect(feedEvent).toMatchObject({ id: envelope.payload.eventId, collection: '_svc', recordId: OPS_RECORD_ID, payload: envelope.payload });
    const reader = { authorization: `Bearer ${await rig.token(['events:read'])}` };
    const pub = await rig.app.inject({ method: 'GET', url: '/api/v1/events?limit=1000', headers: reader });
    expect(pub.json().items.map((e: any) => e.topic)).toEqual(['record.created']);
    const pubByTopic = await rig.app.inject({ method: 'GET', url: '/api/v1/events?topic=webhook.disabled', headers: reader });
    expect(pubByTopic.json().items).toEqual([]);

    // Enabling clears both, and the waiting job is delivered.
    answer({});
    const enabled = (await rig.admin('PATCH', `/admin/v1/webhooks/${gone.id}`, { enabled: true })).json();
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
    await waitFor(async () => (await rig.job(jobs[0].id)).state === 'delivered', 'the waiting job delivered');
    expect(ops.id).toMatch(/^wh_/);
  });

  it('an admin disabling is manual, and causes no operational event', async () => {
    rig = await createDeliveryRig(dialect);
    const ops = await make('ops', '/ops', ['webhook.disabled']);
    const other = await make('other', '/other', ['record.created']);
    const off = (await rig.admin('PATCH', `/admin/v1/webhooks/${other.id}`, { enabled: false })).json();
    expect(off).toMatchObject({ enabled: false, disabledReason: 'manual' });
    expect(typeof off.disabledAt).toBe('string');
    const created = (await rig.admin('POST', '/admin/v1/webhooks', { name: 'x', url: `${rig.receiver.url}/x`, topics: ['record.created'], enabled: false })).json();
    expect(created).toMatchObject({ enabled: false, disabledReason: 'manual' });
    expect((await adminFeed()).filter((e) => e.collection === '_svc')).toEqual([]);
    expect((await rig.admin('GET', '/admin/v1/webhooks')).json().items.find((t: any) => t.id === ops.id)).toMatchObject({ disabledReason: null, disabledAt: null });
  });

  it('failing for SVC_WEBHOOK_DISABLE_AFTER with SVC_WEBHOOK_DISABLE_MIN_FAILURES failed attempts disables the target (failing), not before', async () => {
    const clock = new ManualClock(Date.parse('2026-11-23T00:00:00Z'));
    rig = await createDeliveryRig(
      dialect,
      { SVC_WEBHOOK_RETRY_SCHEDULE: '0s,0s,0s,0s,0s', SVC_WEBHOOK_DISABLE_AFTER: '2m', SVC_WEBHOOK_DISABLE_MIN_FAILURES: '3' },
      { clock },
    );
    // Each attempt takes a minute: the second failure is already two minutes after the streak began, but only the
    // third reaches the minimum count.
    rig.receiver.setHandler((req, res) => {
      clock.advance(61_000);
      res.writeHead(req.url === '/ops' ? 200 : 500).end('x');
    });
    const failing = await make('failing', '/failing', ['record.created']);
    await make('ops', '/ops', ['webhook.disabled']);
    await rig.createRecord({ title: 'a' });
    await waitFor(() => at('/ops').length === 1, 'webhook.disabled');
    const target = (await rig.admin('GET', `/admin/v1/webhooks/${failing.id}`)).json();
    expect(target).toMatchObject({ enabled: false, disabledReason: 'failing' });
    expect(JSON.parse(at('/ops')[0]!.body).payload).toMatchObject({ reason: 'failing', webhook: { id: failing.id, disabledReason: 'failing' } });
    await rig.worker.whenIdle();
    // Exactly the third failed attempt disabled it; its job waits with attempts to spare.
    expect(at('/failing')).toHaveLength(3);
    const [job] = (await rig.admin('GET', `/admin/v1/deliveries?webhookId=${failing.id}`)).json().items;
    expect(job).toMatchObject({ state: 'pending', attemptCount: 3 });
  });

  it('a dead job yields delivery.dead to subscribers other than its target; a dead operational job yields nothing more', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s' });
    answer({ '/dying': 500, '/broken': 500 });
    const dying = await make('dying', '/dying', ['record.created', 'delivery.dead']);
    const broken = await make('broken', '/broken', ['delivery.dead']);
    await make('ops', '/ops', ['delivery.dead']);
    const rec = await rig.createRecord({ title: 'a' });
    await waitFor(() => at('/ops').length === 1 && at('/broken').length === 1, 'delivery.dead at both subscribers');
    await waitFor(async () => (await rig.admin('GET', `/admin/v1/deliveries?webhookId=${broken.id}&state=dead`)).json().items.length === 1, 'the operational job dead');
    await rig.worker.whenIdle();

    const [dead] = (await rig.admin('GET', `/admin/v1/deliveries?webhookId=${dying.id}`)).json().items;
    expect(dead).toMatchObject({ state: 'dead', recordId: rec.id });
    const envelope = JSON.parse(at('/ops')[0]!.body);
    expect(envelope).toMatchObject({ topic: 'delivery.dead', collection: '_svc', recordId: OPS_RECORD_ID });
    expect(Object.keys(envelope.payload)).toEqual(['delivery', 'occurredAt', 'eventId']);
    expect(envelope.payload.delivery).toEqual(dead);
    expect(envelope.payload.delivery.envelope).toBeUndefined();
    expect(envelope.payload.delivery.attempts).toBeUndefined();
    // Never to the target it is about; and the dead job of the operational event caused no second event.
    expect(at('/dying').map((r) => JSON.parse(r.body).topic)).toEqual(['record.created']);
    expect((await adminFeed()).filter((e) => e.collection === '_svc').map((e) => e.topic)).toEqual(['delivery.dead']);
    expect(at('/ops')).toHaveLength(1);
  });
});
