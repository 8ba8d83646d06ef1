import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryIdFor } from '../../src/cli/listen.js';
import { DIALECTS } from '../helpers/db.js';
import { startFeedServer, startProxy, startReceiver } from '../helpers/listen.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

describe.each(DIALECTS)('svc listen (%s)', (dialect) => {
  let svc: TestServer;
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('forwards every event once, signed like a delivery, across dropped connections; stops on Ctrl-C', async () => {
    const started = await startFeedServer(dialect);
    svc = started.svc;
    cleanups.push(() => svc.close());
    const token = started.token;
    const proxy = await startProxy(Number(new URL(svc.baseUrl).port));
    cleanups.push(() => proxy.close());
    let secret = '';
    const receiver = await startReceiver(() => secret);
    cleanups.push(() => receiver.close());
    const written: string[] = [];
    const write = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${svc.baseUrl}/api/v1/collections/issues/records`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ data: { title: `t${written.length}` } }),
        });
        expect(res.status).toBe(201);
        written.push(((await res.json()) as { id: string }).id);
      }
    };
    await write(2); // before listen starts: not forwarded (it starts at the present)

    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', MAIN, 'listen', '--url', proxy.url, '--token', token, '--forward-to', receiver.url], { env: clean });
    cleanups.push(() => child.kill('SIGKILL'));
    let stdout = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stdout += d));
    secret = (await waitFor(() => /signing secret: (whsec_\S+)/.exec(stdout)?.[1], 'the secret', 60_000))!;
    // The form of a target's secret (docs/receiving-webhooks.md): `whsec_` and the padded standard base64 of 32 bytes.
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    const connections = () => stdout.match(/connected: following/g)?.length ?? 0;
    await waitFor(() => connections() === 1, 'listen to connect', 60_000);

    await write(5);
    await waitFor(() => receiver.received.length === 5, 'five forwards', 20_000);
    proxy.cut();
    await write(5); // while listen is disconnected
    await waitFor(() => receiver.received.length === 10, 'ten forwards after reconnecting', 20_000);
    expect(connections()).toBe(2);
    const writing = write(10);
    await waitFor(() => receiver.received.length >= 13, 'some of the next ten', 20_000);
    proxy.cut(); // in the middle of a run of writes
    await writing;
    // The second cut may land after every event already reached listen: it still reconnects (after the server's
    // retry), and only then is a last write the proof that nothing was repeated: a repeat would arrive before it.
    await waitFor(() => connections() === 3, 'listen to reconnect after the second cut', 20_000);
    await write(1);
    await waitFor(() => receiver.received.length >= 21, 'the forward after the last reconnect', 20_000);

    expect(receiver.rejected).toEqual([]);
    expect(receiver.received).toHaveLength(21);
    const feed = (await (await fetch(`${svc.baseUrl}/api/v1/events?limit=100`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: Array<{ id: string }> };
    expect(receiver.received.map((r) => r.eventId)).toEqual(feed.items.slice(2).map((e) => e.id));
    for (const r of receiver.received) {
      expect(r.delivery).toBe(deliveryIdFor(r.eventId));
      expect(r.delivery).toMatch(/^del_[0-9A-HJKMNP-TV-Z]{26}$/);
    }
    expect(stdout.match(/-> 200/g)).toHaveLength(21);
    expect(connections()).toBe(3);

    const exit = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exit).toBe(0);
    expect(stdout).toContain('svc listen: stopped');
  }, 180_000);

  it('refuses what reconnecting cannot fix: a bad token, with status 1', async () => {
    svc = await startTestServer({ dialect, worker: false });
    cleanups.push(() => svc.close());
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'listen', '--url', svc.baseUrl, '--token', 'svc_pat_nope', '--forward-to', 'http://127.0.0.1:9/x'], { env: clean });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
    expect(code).toBe(1);
    expect(stderr).toContain('401');
  }, 90_000);
});
