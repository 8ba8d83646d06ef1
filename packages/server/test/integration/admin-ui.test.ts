import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/http/problems.js';
import { requestIdFor } from '../../src/http/request-id.js';
import { adminUiRoutes } from '../../src/http/routes/admin-ui.js';

/** The UI plugin alone, on the service's own error handler, with its files taken from `root`. */
async function uiApp(root: string): Promise<FastifyInstance> {
  const app = Fastify({ genReqId: requestIdFor });
  app.setErrorHandler(errorHandler);
  await app.register(adminUiRoutes, { root });
  return app;
}

/** A request that never answers fails the test in a second instead of hanging it. */
const within = <T>(p: Promise<T>): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('no answer within 1 s')), 1000))]);

describe('admin UI files', () => {
  const dirs: string[] = [];
  const apps: FastifyInstance[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-ui-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it.each(['/admin/', '/admin/setup?token=x', '/admin/webhooks/wh_1'])('%s without index.html answers 503 unavailable, at once', async (url) => {
    const app = await uiApp(dir());
    apps.push(app);
    const res = await within(app.inject({ method: 'GET', url, headers: { 'x-request-id': 'ui-test-1' } }));
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'unavailable', status: 503, requestId: 'ui-test-1' });
  });

  it('serves index.html for client-side routes and 404 for a missing asset', async () => {
    const root = dir();
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>svc</title>');
    const app = await uiApp(root);
    apps.push(app);
    const page = await within(app.inject({ method: 'GET', url: '/admin/setup?token=x' }));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<title>svc</title>');
    const asset = await within(app.inject({ method: 'GET', url: '/admin/missing.js' }));
    expect(asset.statusCode).toBe(404);
    expect(asset.json().code).toBe('not_found');
  });
});
