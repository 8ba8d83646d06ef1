import { performance } from 'node:perf_hooks';
import { expect } from 'vitest';
import { createRecord, expectOutageAnswers, metric, setUp, status, type Answer } from './outage-client.js';
import { waitFor } from './wait.js';

/**
 * SPEC §12's full disk, judged from outside on a running svc at `base` whose database has a small disk of its own:
 * large records are written until three in a row answer 507; every answer is 201 or 507 `storage_full` (problem+json,
 * Retry-After 30, one request id), never 500 or a dropped connection; reads, /healthz and /readyz answer meanwhile
 * and svc_database_errors_total counts the 507s. Then `free()` makes room (as an operator would) and the same
 * process takes large writes again within 5 s; every acknowledged record is there, and, with a receiver, delivered
 * (the worker rode out the full disk: its claims and results are writes too). `alive()` says the process runs.
 */
export async function fullDiskScenario(opts: {
  base: string;
  /** One large record's data; each must be too big for the room left once the disk is full. */
  record: (n: number) => Record<string, unknown>;
  free: () => void;
  alive: () => boolean;
  /** A webhook target for record.created, and the record ids it has answered 200 for. */
  receiver?: { url: string; delivered: ReadonlySet<string> };
}): Promise<{ acknowledged: number; storageFull: number; backMs: number }> {
  const { base, receiver } = opts;
  const { token } = await setUp(base, receiver?.url);
  const auth = { authorization: `Bearer ${token}` };
  let n = 0;
  const write = () => createRecord(base, token, opts.record(n++));

  const answers: Answer[] = [];
  for (let fullInARow = 0; fullInARow < 3 && answers.length < 300; ) {
    const a = await write();
    answers.push(a);
    fullInARow = a.status === 507 ? fullInARow + 1 : 0;
  }
  expect(answers.filter((a) => a.status !== 201 && a.status !== 507), 'every write answers 201 or 507: never 500, never a dropped connection').toEqual([]);
  const full = answers.filter((a) => a.status === 507);
  expect(full.length, 'the disk filled up').toBeGreaterThanOrEqual(3);
  expectOutageAnswers(answers, 507, 'storage_full', '30');

  // While full: reads answer, the process is alive and ready (the database answers; it only cannot grow).
  const acknowledged = answers.filter((a) => a.status === 201).map((a) => a.id!);
  expect(acknowledged.length).toBeGreaterThan(0);
  const one = await fetch(`${base}/api/v1/collections/items/records/${acknowledged[0]}`, { headers: auth });
  expect(one.status).toBe(200);
  await one.text();
  expect((await status(base, '/healthz')).status).toBe(200);
  expect((await status(base, '/readyz')).status).toBe(200);
  expect(await metric(base, 'svc_database_errors_total{kind="storage_full"}')).toBe(full.length);

  opts.free();
  const freedAt = performance.now();
  const after: Answer[] = [];
  await waitFor(
    async () => {
      const a = await write();
      after.push(a);
      return a.status === 201;
    },
    'a large write accepted once space is freed',
    5_000,
    50,
  );
  const backMs = performance.now() - freedAt;
  for (let i = 0; i < 3; i++) after.push(await write());
  expect(after.filter((a) => a.status !== 201 && a.status !== 507)).toEqual([]);
  expect(after.slice(-3).map((a) => a.status)).toEqual([201, 201, 201]);

  // Nothing acknowledged is lost: the collection holds exactly the records answered 201.
  const all = [...acknowledged, ...after.filter((a) => a.status === 201).map((a) => a.id!)];
  const listed = new Set<string>();
  for (let cursor: string | null = null, first = true; first || cursor; first = false) {
    const res = await fetch(`${base}/api/v1/collections/items/records?limit=20&fields=n${cursor ? `&cursor=${cursor}` : ''}`, { headers: auth });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: Array<{ id: string }>; nextCursor: string | null };
    for (const item of page.items) listed.add(item.id);
    cursor = page.nextCursor;
  }
  expect([...listed].sort()).toEqual([...all].sort());
  if (receiver) await waitFor(() => all.every((id) => receiver.delivered.has(id)), 'every acknowledged write delivered', 60_000, 100);
  expect(opts.alive(), 'svc did not exit').toBe(true);
  return { acknowledged: all.length, storageFull: full.length, backMs: Math.round(backMs) };
}
