import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt } from './helpers/sdk-build.js';
import { jsonLines, runExample as runScript } from './helpers/example-script.js';
import { startClientTestServer, type ClientTestServer } from './helpers/client-server.js';

const script = fileURLToPath(new URL('../../../examples/client-script.mjs', import.meta.url));

const runExample = (env: Record<string, string>) => runScript(script, env, 20_000);
const lines = jsonLines;

describe('examples/client-script.mjs against svc', () => {
  let s: ClientTestServer;

  beforeAll(async () => {
    ensureClientBuilt();
    s = await startClientTestServer({
      dialect: 'sqlite',
      collections: { issues: [{ name: 'title', type: 'text', required: true }] },
    });
  }, 120_000);
  afterAll(async () => s?.close());

  it('creates, updates and lists records', async () => {
    const first = await runExample({ SVC_URL: s.baseUrl, SVC_TOKEN: s.token });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const steps = lines(first.stdout);
    expect(steps.map((l) => l.step)).toEqual(['capabilities', 'created', 'updated', 'first page', 'found', 'listed']);
    expect(steps[2]).toMatchObject({ version: 2 });
    expect(steps.at(-1)).toEqual({ step: 'listed', total: 1 });

    const second = await runExample({ SVC_URL: s.baseUrl, SVC_TOKEN: s.token });
    expect(second.code).toBe(0);
    expect(lines(second.stdout).at(-1)).toEqual({ step: 'listed', total: 2 });
  });

  it('reports svc errors by code and request id, exit status 1', async () => {
    const denied = await runExample({ SVC_URL: s.baseUrl, SVC_TOKEN: 'svc_pat_wrong' });
    expect(denied.code).toBe(1);
    const [error] = lines(denied.stderr);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(error!.requestId).toEqual(expect.any(String));
  });
});
