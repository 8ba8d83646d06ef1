import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * Broker targets in the admin API (SPEC §14): a target names a configured broker and a place in it, never an address;
 * which fields go with which type is checked field by field, each refusal at its own path. This process never
 * connects (no worker): the names are checked against SVC_BROKERS alone.
 */
const BROKERS = 'events=nats://svc:s3cret@127.0.0.1:4222,mq=amqp://guest:guest@127.0.0.1:5672/%2f,cache=redis://:pw@127.0.0.1:6379/2';

describe.each(DIALECTS)('broker targets in the admin API (%s)', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(dialect, { SVC_BROKERS: BROKERS });
  });
  afterEach(async () => t.close());

  const post = (payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'b', topics: ['record.created'], ...payload } });
  const patch = (id: string, payload: Record<string, unknown>) => t.app.inject({ method: 'PATCH', url: `/admin/v1/webhooks/${id}`, headers: t.admin.headers, payload });
  const paths = (res: { json(): any }) => (res.json().errors as Array<{ path: string }>).map((e) => e.path).sort();

  it('creates a target of each kind; every answer shows its type, broker and place, null elsewhere, and no address', async () => {
    const nats = await post({ type: 'nats', broker: 'events', subject: 'svc.{collection}.{topic}' });
    const rabbit = await post({ type: 'rabbitmq', broker: 'mq', exchange: 'svc-events', routingKey: '{collection}.{topic}' });
    const redis = await post({ type: 'redis', broker: 'cache', stream: 'svc:{collection}', maxLength: 10_000 });
    for (const res of [nats, rabbit, redis]) expect(res.statusCode, res.body).toBe(201);
    const none = { url: null, broker: null, subject: null, exchange: null, routingKey: null, stream: null, maxLength: null };
    expect(nats.json()).toMatchObject({ ...none, type: 'nats', broker: 'events', subject: 'svc.{collection}.{topic}' });
    expect(rabbit.json()).toMatchObject({ ...none, type: 'rabbitmq', broker: 'mq', exchange: 'svc-events', routingKey: '{collection}.{topic}' });
    expect(redis.json()).toMatchObject({ ...none, type: 'redis', broker: 'cache', stream: 'svc:{collection}', maxLength: 10_000 });
    // A broker target signs like any other: its secret is shown once.
    expect(nats.json().secret).toMatch(/^whsec_/);

    const list = await t.app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: t.admin.headers });
    expect(list.json().items.map((w: { type: string }) => w.type).sort()).toEqual(['nats', 'rabbitmq', 'redis']);
    const one = await t.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${rabbit.json().id}`, headers: t.admin.headers });
    expect(one.json()).toMatchObject({ type: 'rabbitmq', broker: 'mq', exchange: 'svc-events' });
    // The operator's addresses and credentials never reach an answer.
    for (const body of [list.body, one.body, nats.body, rabbit.body, redis.body]) {
      for (const secret of ['127.0.0.1', 's3cret', 'guest', ':pw@', '4222', '5672', '6379']) expect(body).not.toContain(secret);
    }
  });

  it('an https target answers type https and null broker fields, as before', async () => {
    const res = await post({ url: 'https://93.184.215.14/hook', enabled: false });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ type: 'https', url: 'https://93.184.215.14/hook', broker: null, subject: null, stream: null, maxLength: null });
  });

  it('refuses what a type lacks or does not take, each at its path', async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{}, ['/url']],
      [{ url: null }, ['/url']],
      [{ type: 'nats' }, ['/broker', '/subject']],
      [{ type: 'rabbitmq', broker: 'mq' }, ['/exchange']],
      [{ type: 'redis', broker: 'cache' }, ['/stream']],
      [{ type: 'nats', broker: 'events', subject: 's', url: 'https://93.184.215.14/' }, ['/url']],
      [{ type: 'redis', broker: 'cache', stream: 's', routingKey: 'k', subject: 'x' }, ['/routingKey', '/subject']],
      [{ url: 'https://93.184.215.14/', enabled: false, subject: 's', maxLength: 5 }, ['/maxLength', '/subject']],
      [{ type: 'nats', broker: 'nowhere', subject: 's' }, ['/broker']],
      // A broker of another kind.
      [{ type: 'nats', broker: 'mq', subject: 's' }, ['/broker']],
    ];
    for (const [payload, want] of cases) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().code).toBe('validation_failed');
      expect(paths(res), JSON.stringify(payload)).toEqual(want);
    }
    const unknown = await post({ type: 'nats', broker: 'nowhere', subject: 's' });
    expect(unknown.json().errors[0].message).toContain('"events"');
  });

  it('refuses subjects, keys, streams and exchanges a broker could not take, and unknown placeholders', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'nats', broker: 'events', subject: 'svc.{record}' }, '/subject'],
      [{ type: 'nats', broker: 'events', subject: 'svc.>' }, '/subject'],
      [{ type: 'nats', broker: 'events', subject: 'svc.*.x' }, '/subject'],
      [{ type: 'nats', broker: 'events', subject: 'svc..x' }, '/subject'],
      [{ type: 'nats', broker: 'events', subject: 'svc.{topic}.' }, '/subject'],
      [{ type: 'nats', broker: 'events', subject: 'svc x' }, '/subject'],
      [{ type: 'nats', broker: 'events', subject: `${'s'.repeat(200)}.{collection}` }, '/subject'],
      [{ type: 'rabbitmq', broker: 'mq', exchange: 'has space' }, '/exchange'],
      [{ type: 'rabbitmq', broker: 'mq', exchange: '{collection}' }, '/exchange'],
      [{ type: 'rabbitmq', broker: 'mq', exchange: 'x', routingKey: 'a {topic}' }, '/routingKey'],
      [{ type: 'redis', broker: 'cache', stream: 'svc:{id}' }, '/stream'],
      [{ type: 'redis', broker: 'cache', stream: 's', maxLength: 0 }, '/maxLength'],
    ];
    for (const [payload, path] of cases) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(paths(res), JSON.stringify(payload)).toEqual([path]);
    }
    // The default exchange (routing by queue name) and a subject that is one placeholder are fine.
    expect((await post({ type: 'rabbitmq', broker: 'mq', exchange: '', routingKey: 'orders' })).statusCode).toBe(201);
    expect((await post({ type: 'nats', broker: 'events', subject: '{topic}' })).statusCode).toBe(201);
  });

  it('a redis target refuses static headers named body or id (its entry\'s own fields); others may send them', async () => {
    const refused = await post({ type: 'redis', broker: 'cache', stream: 's', headers: { ID: 'x', 'X-Api-Key': 'k' } });
    expect(refused.statusCode).toBe(422);
    expect(paths(refused)).toEqual(['/headers/ID']);
    const nats = await post({ type: 'nats', broker: 'events', subject: 's', headers: { Id: 'abc12345', Body: 'b' } });
    expect(nats.statusCode, nats.body).toBe(201);
    // Switching that target to redis keeps its headers, so it is refused too.
    const switched = await patch(nats.json().id, { type: 'redis', broker: 'cache', stream: 's' });
    expect(switched.statusCode).toBe(422);
    expect(paths(switched)).toEqual(['/headers/Body', '/headers/Id']);
  });

  it('PATCH changes a field of the same type, or switches type starting afresh; the destination guard applies to https only', async () => {
    const created = (await post({ type: 'nats', broker: 'events', subject: 'a' })).json();
    const renamed = await patch(created.id, { subject: 'b.{topic}' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ type: 'nats', broker: 'events', subject: 'b.{topic}' });
    // Other fields beside the destination's: the new name is kept, the destination untouched.
    expect((await patch(created.id, { name: 'renamed' })).json()).toMatchObject({ name: 'renamed', type: 'nats', subject: 'b.{topic}' });
    expect((await patch(created.id, { url: 'https://93.184.215.14/' })).statusCode).toBe(422);

    // To redis: the nats fields go, the redis ones are required.
    const incomplete = await patch(created.id, { type: 'redis', broker: 'cache' });
    expect(paths(incomplete)).toEqual(['/stream']);
    const redis = await patch(created.id, { type: 'redis', broker: 'cache', stream: 'svc' });
    expect(redis.json()).toMatchObject({ type: 'redis', subject: null, stream: 'svc', broker: 'cache' });

    // To https: a loopback URL is refused as it always is (no SVC_WEBHOOK_ALLOW_CIDRS here), though the brokers are on loopback.
    const loopback = await patch(created.id, { type: 'https', url: 'https://127.0.0.1/hook' });
    expect(loopback.statusCode).toBe(422);
    expect(loopback.json().code).toBe('destination_refused');
    const https = await patch(created.id, { type: 'https', url: 'https://93.184.215.14/hook', enabled: false });
    expect(https.statusCode, https.body).toBe(200);
    expect(https.json()).toMatchObject({ type: 'https', url: 'https://93.184.215.14/hook', broker: null, stream: null });
  });
});

describe.each(DIALECTS)('broker targets without SVC_BROKERS (%s)', (dialect) => {
  it('capabilities list the three destinations (the feature is there; which brokers exist is the operator\'s)', async () => {
    const t = await createTestApp(dialect);
    try {
      const features = (await t.app.inject({ method: 'GET', url: '/api/v1/capabilities' })).json().features;
      expect(features).toEqual(expect.arrayContaining(['destinations.nats', 'destinations.rabbitmq', 'destinations.redis']));
    } finally {
      await t.close();
    }
  });

  it('every broker name is unknown: validation_failed at /broker, naming none configured', async () => {
    const t = await createTestApp(dialect);
    try {
      const res = await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'n', topics: ['record.created'], type: 'redis', broker: 'cache', stream: 's' } });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toEqual([{ path: '/broker', message: 'no redis broker "cache" is configured (SVC_BROKERS names none of kind redis)' }]);
    } finally {
      await t.close();
    }
  });
});
