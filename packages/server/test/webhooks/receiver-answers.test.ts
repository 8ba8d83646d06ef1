import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Whatever a receiver answers is stored, and the job moves on: on PostgreSQL a NUL byte in a `text` value is refused
 * outright, so an answer stored as received would keep its attempt from ever being recorded.
 */
describe.each(DIALECTS)('what a receiver answers never stalls its job (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  const binary = randomBytes(64 * 1024);
  binary[0] = 0; // a NUL at the very start, whatever the random bytes hold
  it.each([
    ['a NUL byte', Buffer.from('down\u0000for maintenance')],
    ['invalid UTF-8', Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0xc3, 0x28, 0x0a])],
    ['control characters', Buffer.from('a\u0001b\u001bc\u007fd\te\nf')],
    ['a 64 KiB binary body', binary],
  ])('%s: every attempt is recorded, the schedule runs out, the job is dead', async (_what, body) => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s,10ms,10ms' });
    await rig.target();
    rig.receiver.setHandler((_req, res) => res.writeHead(500, { 'content-type': 'application/octet-stream' }).end(body));
    await rig.createRecord({ title: 'binary answer' });
    await waitFor(() => rig.receiver.requests.length >= 1, 'the first attempt');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    const job = await waitFor(async () => {
      const j = await rig.job(id);
      return j.state === 'dead' ? j : null;
    }, 'the job to go dead');
    expect(job.attemptCount).toBe(3);
    expect(rig.receiver.requests).toHaveLength(3);
    expect(job.attempts.map((a: any) => [a.number, a.statusCode, a.error?.code])).toEqual([
      [1, 500, 'http_status'],
      [2, 500, 'http_status'],
      [3, 500, 'http_status'],
    ]);
    for (const a of job.attempts) {
      expect(Buffer.byteLength(a.responseSnippet)).toBeLessThanOrEqual(1024);
      // Stored as text either database accepts: no C0 control but tab, newline and carriage return, no DEL.
      expect(a.responseSnippet).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/);
    }
  });

  it('keeps what is printable of the answer, marking what was not', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s' });
    await rig.target();
    rig.receiver.setHandler((_req, res) => res.writeHead(502).end(Buffer.from('bad\u0000gateway\n\u00e9')));
    await rig.createRecord({ title: 'x' });
    await waitFor(() => rig.receiver.requests.length === 1, 'the attempt');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    const job = await waitFor(async () => ((await rig.job(id)).state === 'dead' ? rig.job(id) : null), 'dead');
    expect(job.attempts[0].responseSnippet).toBe('bad\ufffdgateway\n\u00e9');
  });

  it('a result the database will not store is tried again, then recorded as a failed attempt, and the job goes on', async () => {
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_RETRY_SCHEDULE: '0s,0s,0s' });
    await rig.target();
    // Stands in for whatever a database may refuse: this answer is rejected wherever an attempt is stored, an attempt
    // row or the success a delivered job keeps on its row (migration 020).
    const db = rig.ctx.database.db;
    if (dialect === 'sqlite') {
      await sql`create trigger refuse_answer before insert on delivery_attempts_rows when new.response_snippet like '%unstorable%'
                begin select raise(abort, 'refused'); end`.execute(db);
      await sql`create trigger refuse_success before update on delivery_jobs when new.success_snippet like '%unstorable%'
                begin select raise(abort, 'refused'); end`.execute(db);
    } else {
      await sql`create function refuse_answer() returns trigger language plpgsql as $$ begin raise exception 'refused'; end $$`.execute(db);
      await sql`create trigger refuse_answer before insert on delivery_attempts_rows for each row
                when (new.response_snippet like '%unstorable%') execute function refuse_answer()`.execute(db);
      await sql`create trigger refuse_success before update on delivery_jobs for each row
                when (new.success_snippet like '%unstorable%') execute function refuse_answer()`.execute(db);
    }
    let calls = 0;
    rig.receiver.setHandler((_req, res) => {
      calls++;
      res.writeHead(200).end(calls === 1 ? 'unstorable' : 'fine');
    });
    await rig.createRecord({ title: 'x' });
    await waitFor(() => rig.receiver.requests.length >= 1, 'the first attempt');
    const id = String(rig.receiver.requests[0]!.headers['svc-delivery']);
    const job = await waitFor(async () => {
      const j = await rig.job(id);
      return j.state === 'delivered' ? j : null;
    }, 'the job to be delivered by its next attempt');
    expect(job.attempts.map((a: any) => [a.number, a.statusCode, a.error?.code ?? null, a.responseSnippet])).toEqual([
      [1, 200, 'result_unrecorded', ''],
      [2, 200, null, 'fine'],
    ]);
    expect(rig.receiver.requests).toHaveLength(2);
  });
});
