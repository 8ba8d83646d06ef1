import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, spawnListen, startFeedServer } from '../helpers/listen.js';

/**
 * SPEC §12: `svc listen` takes its token from SVC_TOKEN or --token-file as well as --token (which `ps` shows to every
 * user of the machine). Command-line handling only: one database is enough.
 */
describe('svc listen token sources', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('reads SVC_TOKEN and --token-file (the file before the variable), refuses both flags or none', async () => {
    const feed = await startFeedServer('sqlite');
    cleanups.push(() => feed.svc.close());
    const dir = mkdtempSync(join(tmpdir(), 'svc-listen-token-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'token');
    writeFileSync(file, `${feed.token}\n`, { mode: 0o600 });
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    const base = ['--url', feed.svc.baseUrl, '--forward-to', 'http://127.0.0.1:9/hook'];

    const connects = async (args: string[], env: Record<string, string>) => {
      const run = spawnListen([...base, ...args], cleanEnv(env));
      cleanups.push(() => run.kill());
      await run.wait(/connected: following|svc: .*/, 'listen to connect or fail');
      expect(run.out()).toContain('connected: following');
      expect(await run.interrupt()).toBe(0);
      // The token is never echoed.
      expect(run.out()).not.toContain(feed.token);
    };
    await connects([], { SVC_TOKEN: feed.token });
    await connects(['--token-file', file], {});
    await connects(['--token-file', file], { SVC_TOKEN: 'svc_pat_not-this-one' });

    const refused = async (args: string[], env: Record<string, string>, message: string) => {
      const run = spawnListen([...base, ...args], cleanEnv(env));
      cleanups.push(() => run.kill());
      expect(await run.exit).toBe(1);
      expect(run.out()).toContain(message);
    };
    await refused(['--token', feed.token, '--token-file', file], {}, 'give --token or --token-file, not both');
    await refused([], {}, 'svc listen needs a token');
    await refused(['--token-file', empty], {}, 'holds no token');
    await refused(['--token-file', join(dir, 'missing')], {}, '--token-file: ENOENT');
    // A bad token from the variable is refused by svc, as from the flag.
    await refused([], { SVC_TOKEN: 'svc_pat_nope' }, '401');
  }, 240_000);
});
