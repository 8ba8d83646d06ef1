import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeliverySender } from '../../src/webhooks/worker/worker.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';
import { turnCounter } from '../helpers/turn-counter.js';

/**
 * SPEC §12: an attempt's start is synchronous up to its first write (the envelope, the HMAC over the body, the body
 * handed to the socket), milliseconds for a body of megabytes; the attempts a write's hand-off or a claim starts
 * together started in one turn of the event loop (four targets of a 1 MB record's update, 2 MB bodies, held a
 * SQLite process's loop 250-580 ms on a loaded machine). An attempt of a large body (256 KiB or more) now starts in a
 * turn of its own.
 */
describe.each(DIALECTS)('attempts of large bodies (%s)', (dialect) => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('the four attempts of one large record start in four turns of the event loop, and each body arrives whole', async () => {
    rig = await createDeliveryRig(dialect);
    for (let i = 0; i < 4; i++) await rig.target(['record.created']);

    // Each attempt notes the turn it started in.
    const counter = turnCounter();
    const turns: number[] = [];
    const sender = (rig.worker as unknown as { sender: DeliverySender }).sender;
    const deliver = sender.deliver.bind(sender);
    vi.spyOn(sender, 'deliver').mockImplementation((...args) => {
      turns.push(counter.turn);
      return deliver(...args);
    });
    try {
      const title = 't'.repeat(300_000);
      await rig.createRecord({ title });
      await waitFor(() => rig!.receiver.requests.length >= 4, 'four deliveries');
      for (const req of rig.receiver.requests) expect((JSON.parse(req.body.toString()) as { payload: { record: { data: { title: string } } } }).payload.record.data.title).toBe(title);
    } finally {
      counter.stop();
    }
    expect(turns).toHaveLength(4);
    expect(new Set(turns).size, `turns ${turns.join(', ')}`).toBe(4);
  });
});
