import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { pruneExpired } from '../../src/maintenance.js';
import { signingKeys } from '../../src/webhooks/targets.js';
import { findTarget } from '../../src/webhooks/targets-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

describe.each(DIALECTS)('previous secret erased when its overlap ends (%s)', (dialect) => {
  let t: TestApp;
  afterEach(async () => t.close());

  const raw = (id: string) =>
    t.ctx.database.db.selectFrom('webhooks').select(['previous_secret_sealed', 'previous_secret_expires_at']).where('id', '=', id).executeTakeFirstOrThrow();

  it('keeps the previous secret during the overlap and erases it after', async () => {
    const clock = new ManualClock(Date.now());
    t = await createTestApp(dialect, {}, { clock, resolver: async () => [{ address: '93.184.216.34', family: 4 }] });
    const created = await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'x', url: 'https://receiver.example/hook', topics: ['record.created'] } });
    expect(created.statusCode).toBe(201);
    const { id, secret: oldSecret } = created.json() as { id: string; secret: string };
    const rotated = await t.app.inject({ method: 'POST', url: `/admin/v1/webhooks/${id}/rotate-secret`, headers: t.admin.headers, payload: { overlapSeconds: 60 } });
    expect(rotated.statusCode).toBe(200);
    const newSecret = (rotated.json() as { secret: string }).secret;

    clock.advance(59_000);
    await pruneExpired(t.ctx);
    expect((await raw(id)).previous_secret_sealed).not.toBeNull();
    expect(signingKeys(t.ctx.box, (await findTarget(t.ctx.database.db, id))!, clock.now()).keys.map((k) => ('secret' in k ? k.secret : null))).toEqual([newSecret, oldSecret]);

    clock.advance(2_000);
    await pruneExpired(t.ctx);
    const after = await raw(id);
    expect(after.previous_secret_sealed).toBeNull();
    expect(after.previous_secret_expires_at).toBeNull();
    expect(signingKeys(t.ctx.box, (await findTarget(t.ctx.database.db, id))!, clock.now()).keys.map((k) => ('secret' in k ? k.secret : null))).toEqual([newSecret]);
  });
});
