import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/db.js';
import { spawnListen, startFeedServer, startReceiver } from '../helpers/listen.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12: any record that can be written goes through `svc listen`: the update event of a record of
 * SVC_BODY_MAX_BYTES carries it twice (`record` and `previous`), about 2 MB, forwarded whole and signed.
 */
describe.each(DIALECTS)('svc listen and the largest events (%s)', (dialect) => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('forwards the ~2 MB update event of a 1 MiB record', async () => {
    const feed = await startFeedServer(dialect);
    cleanups.push(() => feed.svc.close());
    let secret = '';
    const receiver = await startReceiver(() => secret);
    cleanups.push(() => receiver.close());
    const listen = spawnListen(['--url', feed.svc.baseUrl, '--token', feed.token, '--forward-to', receiver.url]);
    cleanups.push(() => listen.kill());
    secret = await listen.wait(/signing secret: (whsec_\S+)/, 'the secret');
    await listen.wait(/connected: following/, 'listen to connect');

    // As large as the default body limit (1 MiB) lets a create and a PATCH be: `{"data":{"title":"…"}}`.
    const size = 1024 * 1024 - 32;
    const id = await feed.create('a'.repeat(size));
    await feed.update(id, 'b'.repeat(size));
    await waitFor(() => receiver.received.length === 2, 'both events forwarded', 60_000);
    expect(receiver.rejected).toEqual([]);
    expect(receiver.received.map((r) => [r.topic, r.status])).toEqual([['record.created', 200], ['record.updated', 200]]);
    expect(receiver.received[1]!.bytes).toBeGreaterThan(2 * size);
    expect(await listen.interrupt()).toBe(0);
  }, 240_000);
});
