import { afterEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/lib/crypto.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { SecretCache } from '../../src/webhooks/worker/secret-cache.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

describe.each(DIALECTS)('the worker stops cleanly (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  it('stop() right after start() waits for the claim under way: no job is left delivering', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_TARGET_CONCURRENCY: '20' }, { startWorker: false });
    await rig.target();
    // The receiver holds every answer, so whatever the claim took is still in flight when stop() comes.
    rig.receiver.setHandler(() => {});
    for (let i = 0; i < 20; i++) await rig.createRecord({ title: `t${i}` });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    for (let round = 0; round < 3; round++) {
      await rig.worker.start();
      if (round === 0) {
        // 20 attempts wait on the receiver at once, each listening to the worker's cancel signal: no leak warning.
        await waitFor(() => rig.receiver.requests.length >= 20, '20 attempts in flight');
      }
      await rig.worker.stop(50);
      const states = await rig.ctx.database.db.selectFrom('delivery_jobs').select(['state', 'lease_id', 'attempt_count']).execute();
      expect(states).toHaveLength(20);
      // Released, not lost and not stuck behind a lease: every job claimable at once, no attempt used.
      expect(states.every((s) => s.state === 'pending' && s.lease_id === null && s.attempt_count === 0)).toBe(true);
    }
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});

describe('SecretCache', () => {
  const box = new SecretBox('ab'.repeat(32));
  const target = (id: string, secret: string, previous: string | null = null, until: number | null = null): TargetRow => ({
    id,
    name: id,
    url: 'https://example.com/',
    topics: ['record.created'],
    enabled: true,
    secretSealed: box.seal(secret, id),
    previousSecretSealed: previous === null ? null : box.seal(previous, id),
    previousSecretExpiresAt: until,
    createdAt: 0,
    updatedAt: 0,
    signatureAlgorithm: 'hmac-sha256',
    headersSealed: null,
  } as TargetRow);
  const secretsOf = (cache: SecretCache, t: TargetRow, now: number) => cache.openedFor(t, now).signing.keys.map((k) => (typeof k === 'object' && 'secret' in k ? k.secret : null));

  it('forgets targets that leave the view, and rotated-out secrets once their overlap ends', () => {
    const cache = new SecretCache(box);
    expect(secretsOf(cache, target('wh_a', 'whsec_a'), 0)).toEqual(['whsec_a']);
    expect(secretsOf(cache, target('wh_b', 'whsec_b'), 0)).toEqual(['whsec_b']);
    const rotated = target('wh_a', 'whsec_a2', 'whsec_a', 1000);
    expect(secretsOf(cache, rotated, 999)).toEqual(['whsec_a2', 'whsec_a']);
    expect(secretsOf(cache, rotated, 1000)).toEqual(['whsec_a2']);
    // wh_b was deleted (or disabled): the next read of the targets no longer holds it.
    cache.retain(['wh_a']);
    expect(cache.size).toBe(1);
    expect(JSON.stringify([...(cache as unknown as { entries: Map<string, unknown> }).entries])).not.toContain('whsec_b');
    expect(JSON.stringify([...(cache as unknown as { entries: Map<string, unknown> }).entries])).not.toMatch(/"whsec_a"/);
  });
});
