import { afterEach, describe, expect, it } from 'vitest';
import { deliveryIdFor } from '../../src/cli/listen.js';
import { DIALECTS } from '../helpers/db.js';
import { spawnListen, startFeedServer, startReceiver } from '../helpers/listen.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12: `svc listen` moves past an event only once its forward got a 2xx, retrying with backoff and saying so;
 * each line shows the cursor to resume from, and `--after` takes that cursor or an event id.
 */
describe.each(DIALECTS)('svc listen retries a failed forward and resumes where it stood (%s)', (dialect) => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('retries until 2xx, never skipping; a stop mid-retry resumes at that event, by cursor or by event id', async () => {
    const feed = await startFeedServer(dialect);
    cleanups.push(() => feed.svc.close());
    let secret = '';
    let down = false;
    const seen = new Map<string, number>();
    // The first event fails twice (503, then 500); while `down`, everything is 503.
    const receiver = await startReceiver(
      () => secret,
      (r) => {
        const tries = (seen.get(r.eventId) ?? 0) + 1;
        seen.set(r.eventId, tries);
        if (down) return 503;
        return seen.size === 1 && tries <= 2 ? [503, 500][tries - 1]! : 200;
      },
    );
    cleanups.push(() => receiver.close());
    const ok = () => receiver.received.filter((r) => r.status === 200).map((r) => r.eventId);

    const first = spawnListen(['--url', feed.svc.baseUrl, '--token', feed.token, '--forward-to', receiver.url]);
    cleanups.push(() => first.kill());
    secret = await first.wait(/signing secret: (whsec_\S+)/, 'the secret');
    await first.wait(/connected: following/, 'listen to connect');
    await feed.create('one');
    await feed.create('two');
    const [e1, e2] = await waitFor(async () => {
      const ids = await feed.eventIds();
      return ids.length === 2 ? ids : null;
    }, 'two events');
    await waitFor(() => ok().length === 2, 'both events forwarded with 200', 60_000);
    expect(receiver.received.map((r) => [r.eventId, r.status])).toEqual([[e1, 503], [e1, 500], [e1, 200], [e2, 200]]);
    expect(new Set(receiver.received.filter((r) => r.eventId === e1).map((r) => r.delivery))).toEqual(new Set([deliveryIdFor(e1!)]));
    expect(first.out()).toContain(`${e1} -> 503, retrying in 1s`);
    expect(first.out()).toContain(`${e1} -> 500, retrying in 2s`);
    const afterE2 = await first.wait(new RegExp(`${e2} -> 200 \\(cursor (\\S+)\\)`), "e2's cursor");

    // The receiver goes down: the third event is retried, and listen stops while it waits to try again.
    down = true;
    await feed.create('three');
    const e3 = await waitFor(async () => (await feed.eventIds())[2], 'the third event');
    await first.wait(new RegExp(`${e3} -> 503, retrying in 2s`), 'a second failed forward of the third event');
    expect(await first.interrupt()).toBe(0);
    expect(first.out()).toContain(`svc listen: stopped (resume with --after ${afterE2})`);

    // Resumed from the printed cursor: the third event comes first, nothing before it again.
    down = false;
    const before = receiver.received.length;
    const byCursor = spawnListen(['--url', feed.svc.baseUrl, '--token', feed.token, '--forward-to', receiver.url, '--secret', secret, '--after', afterE2]);
    cleanups.push(() => byCursor.kill());
    await byCursor.wait(new RegExp(`${e3} -> 200`), 'the third event forwarded after the restart');
    expect(receiver.received.slice(before).map((r) => [r.eventId, r.status])).toEqual([[e3, 200]]);
    expect(await byCursor.interrupt()).toBe(0);

    // The same from the event id the line showed: looked up in the feed, the next event is the third again.
    const byId = spawnListen(['--url', feed.svc.baseUrl, '--token', feed.token, '--forward-to', receiver.url, '--secret', secret, '--after', e2!]);
    cleanups.push(() => byId.kill());
    await byId.wait(new RegExp(`${e3} -> 200 \\(cursor (\\S+)\\)`), 'the third event forwarded after --after <event id>');
    expect(byId.out()).toContain(`looking up ${e2} in the feed`);
    expect(receiver.received.slice(before + 1).map((r) => [r.eventId, r.status, r.delivery])).toEqual([[e3, 200, deliveryIdFor(e3!)]]);
    expect(await byId.interrupt()).toBe(0);
    expect(receiver.rejected).toEqual([]);

    // An event id the feed does not hold is refused, with status 1.
    const unknown = spawnListen(['--url', feed.svc.baseUrl, '--token', feed.token, '--forward-to', receiver.url, '--after', 'evt_00000000000000000000000000']);
    cleanups.push(() => unknown.kill());
    expect(await unknown.exit).toBe(1);
    expect(unknown.out()).toContain('no such event in the feed');
  }, 240_000);
});
