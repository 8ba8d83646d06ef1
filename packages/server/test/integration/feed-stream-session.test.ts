import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const MINUTE = 60_000;

/**
 * SPEC §12: an admin event stream does not keep an idle session alive. Its re-checks of the session (every
 * recheckMs) used to count as activity, as any admin request does once a minute, so a session with a stream open
 * never idled out.
 */
describe.each(DIALECTS)('an admin event stream and its session (%s)', (dialect) => {
  let t: TestApp;
  const clients: SseClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await t?.close();
  });

  it('lets the session idle out: then the stream ends with event: error', async () => {
    const clock = new ManualClock();
    t = await createTestApp(dialect, { SVC_SESSION_IDLE_MINUTES: '30' }, { clock, streamTiming: { pingMs: 60_000, recheckMs: 50 } });
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const created = await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: t.admin.headers, payload: { name: 'r', scopes: ['events:read'], collections: null } });
    const token = created.json() as { id: string; token: string };
    // Re-checks go through the owners in the order their streams opened: this token's first, then the admin's.
    const tokenStream = await openSse(`${base}/api/v1/events/stream`, { authorization: `Bearer ${token.token}` });
    const adminStream = await openSse(`${base}/admin/v1/events/stream`, t.admin.headers);
    clients.push(tokenStream, adminStream);
    expect([tokenStream.status, adminStream.status]).toEqual([200, 200]);

    // 20 minutes on, well within the idle time: a re-check would count as activity now if it touched the session.
    clock.advance(20 * MINUTE);
    // The token goes behind the server's back (no immediate re-check): the round of re-checks that ends its stream
    // looks at the admin session next, in the same turn, at this time.
    await t.ctx.database.db.deleteFrom('api_tokens').where('id', '=', token.id).execute();
    await tokenStream.ended;
    expect(JSON.parse(tokenStream.events().at(-1)!.data!).code).toBe('unauthorized');

    // 31 minutes after the login, the last activity: the session has idled out and its stream ends.
    let ended = false;
    void adminStream.ended.then(() => (ended = true));
    clock.advance(11 * MINUTE);
    await waitFor(() => ended, 'the admin stream to end with its session');
    const last = adminStream.events().at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data!)).toMatchObject({ code: 'unauthorized', status: 401 });
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie: t.admin.cookie } })).statusCode).toBe(401);
  });
});
