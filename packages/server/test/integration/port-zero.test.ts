import { afterEach, describe, expect, it } from 'vitest';
import { startProcess, type Running } from '../../src/runtime.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * SVC_PORT=0 (README: "0 picks a free one") with SVC_PUBLIC_URL left to its default (`http://<host>:<port>`): the
 * setup link, the Origin check and the OpenAPI servers name the port the API answers on, not port 0.
 */
describe('SVC_PORT=0 with the default public URL', () => {
  let t: TestContext | null = null;
  let running: Running | null = null;
  afterEach(async () => {
    await running?.stop();
    await t?.close();
    running = t = null;
  });

  it('links, checks origins and documents the port it listens on', async () => {
    t = await createTestContext('sqlite', { SVC_HOST: '127.0.0.1', SVC_PORT: '0' });
    expect(t.ctx.config.publicUrl).toBe('http://127.0.0.1:0');
    running = await startProcess(t.ctx, { api: true, worker: false });
    const origin = new URL(running.url!).origin;
    expect(new URL(origin).port).not.toBe('0');
    expect(new URL(running.setupLink!).origin).toBe(origin);

    const openapi = (await (await fetch(`${origin}/api/v1/openapi.json`)).json()) as { servers: Array<{ url: string }> };
    expect(openapi.servers).toEqual([{ url: origin }]);

    // The setup link works from a browser on that origin: the Origin check knows it.
    const token = new URL(running.setupLink!).searchParams.get('token');
    const setup = await fetch(`${origin}/admin/v1/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ token, email: 'first@example.com', password: 'long enough password' }),
    });
    expect(setup.status).toBe(201);
    const login = await fetch(`${origin}/admin/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ email: 'first@example.com', password: 'long enough password' }),
    });
    expect(login.status).toBe(200);
    const foreign = await fetch(`${origin}/admin/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:0' },
      body: JSON.stringify({ email: 'first@example.com', password: 'long enough password' }),
    });
    expect(foreign.status).toBe(403);
  });
});
