import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * GET /admin/v1/brokers (SPEC §14): what the admin UI's target form offers. Names and kinds of SVC_BROKERS only: the
 * URLs hold hosts, users and passwords, and none of them may reach an answer.
 */
const BROKERS = 'events=nats://svc:s3cret@127.0.0.1:4222,mq=amqps://guest:hunter2@mq.internal:5671/%2f,cache=redis://:pw@127.0.0.1:6379/2';

describe.each(DIALECTS)('GET /admin/v1/brokers (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('lists the configured brokers in their order, name and kind only, never a URL or its credentials', async () => {
    t = await createTestApp(dialect, { SVC_BROKERS: BROKERS });
    const res = await t.app.inject({ method: 'GET', url: '/admin/v1/brokers', headers: t.admin.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      items: [
        { name: 'events', kind: 'nats' },
        { name: 'mq', kind: 'rabbitmq' },
        { name: 'cache', kind: 'redis' },
      ],
    });
    for (const secret of ['s3cret', 'hunter2', ':pw@', 'guest', '127.0.0.1', 'mq.internal', '4222', '5671', '6379', '//']) {
      expect(res.body).not.toContain(secret);
    }
  });

  it('answers an empty list when SVC_BROKERS is unset', async () => {
    t = await createTestApp(dialect);
    const res = await t.app.inject({ method: 'GET', url: '/admin/v1/brokers', headers: t.admin.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ items: [] });
  });

  it('answers 401 without a session, and names no broker', async () => {
    t = await createTestApp(dialect, { SVC_BROKERS: BROKERS });
    const res = await t.app.inject({ method: 'GET', url: '/admin/v1/brokers' });
    expect(res.statusCode, res.body).toBe(401);
    expect(res.body).not.toContain('events');
  });
});
