import { performance } from 'node:perf_hooks';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import {
  expectOutageAnswers,
  metric,
  serveEnv,
  servedAgainAfter,
  setUp,
  startCountingReceiver,
  startLongPoller,
  startWriters,
  status,
  undoAfterAll,
  type Answer,
} from '../helpers/outage-client.js';
import { openSse } from '../helpers/sse.js';
import { exited, spawnSvc } from '../helpers/processes.js';
import { freePort } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12 "Outages", from outside, on PostgreSQL: `svc serve --no-worker` and `svc worker`, two real processes, reach
 * the real server through a TCP proxy the test turns into the faults — connections refused and cut (the server down),
 * connections that stop answering (a hung server: accepted, never answered), connections cut with the server up —
 * while writers keep creating records and deliveries are under way, the receiver down for part of it. Every write
 * answers 201 or 503 `unavailable` (problem+json, Retry-After, X-Request-ID) within SVC_REQUEST_TIMEOUT_MS, never 500
 * and never a dropped connection; /readyz is 503 and /healthz 200 meanwhile; neither process exits; writes are served
 * again within 5 s of each return; every acknowledged write is stored and delivered.
 */
// Short, so the test is; long enough that a loaded machine opens a connection within its half (outageTimeouts).
const REQUEST_TIMEOUT_MS = 10_000;

describe('PostgreSQL outages, two svc processes behind a TCP proxy', () => {
  const undo = undoAfterAll();

  it.skipIf(!POSTGRES_URL)(
    'refused, hung and cut connections answer 503 unavailable in time; the same processes serve again within 5 s, lose nothing and deliver everything',
    async () => {
      const real = new URL(POSTGRES_URL);
      const proxy: TcpProxy = await startTcpProxy({ host: real.hostname, port: Number(real.port || 5432) });
      undo(() => proxy.close());
      const database: TestDatabase = await createTestDatabase('postgres');
      undo(() => database.drop());
      const hook = await startCountingReceiver(database.dir);
      undo(() => hook.receiver.close());

      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const env = {
        ...serveEnv(port, proxy.via(database.url)),
        ...hook.env,
        SVC_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      };
      const processes: Record<string, ChildProcess> = {};
      const exits: string[] = [];
      const spawn = (name: string, args: string[]) => {
        const child = spawnSvc(args, env);
        child.once('exit', (code, signal) => exits.push(`${name} exited (${code ?? signal})`));
        processes[name] = child;
        undo(async () => {
          child.kill('SIGTERM');
          await exited(child);
        });
      };
      spawn('api', ['serve', '--no-worker']);
      await waitFor(async () => (await status(base, '/readyz').catch(() => ({ status: 0 }))).status === 200, 'the API ready', 60_000, 100);
      spawn('worker', ['worker']);
      const { token } = await setUp(base, hook.url);

      // Feed readers ride the outages out too: a live stream and a long-poller, both from before the first write.
      const stream = await openSse(`${base}/api/v1/events/stream?collection=items`, { authorization: `Bearer ${token}` });
      expect(stream.status).toBe(200);
      undo(() => stream.close());
      const poller = startLongPoller(base, token);
      await waitFor(() => poller.statuses.length > 0 || stream.frames.length > 1, 'the feed readers waiting', 10_000);
      let n = 0;
      const writers = startWriters(base, token, 4, () => ({ n: n++ }));
      const readiness: Array<{ phase: string; readyz: number; retryAfter: string | null; healthz: number }> = [];
      const probe = async (phase: string) => {
        const [r, h] = await Promise.all([status(base, '/readyz'), status(base, '/healthz')]);
        readiness.push({ phase, readyz: r.status, retryAfter: r.retryAfter, healthz: h.status });
      };
      const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const answered = (phase: string, from: number, to: number) => writers.answers.filter((a) => a.sentAt >= from && a.sentAt < to).map((a) => ({ phase, ...a }));
      const phases: Array<{ name: string; from: number; to: number; back: number | null }> = [];
      const outage = async (name: string, start: () => Promise<void>, holdMs: number) => {
        const from = performance.now();
        await start();
        await wait(holdMs / 2);
        await probe(name);
        await wait(holdMs / 2);
        await proxy.setMode('pass');
        const to = performance.now();
        await waitFor(() => servedAgainAfter(writers.answers, to) !== null, `writes served again after ${name}`, 20_000, 20);
        phases.push({ name, from, to, back: servedAgainAfter(writers.answers, to) });
      };

      // The worker runs (a delivery came) and writes flow before the first fault.
      await waitFor(() => hook.delivered.size > 0 && writers.answers.filter((a) => a.status === 201).length >= 40, 'writes and deliveries before the faults', 60_000);
      expect(exits).toEqual([]);
      // The server down: new connections refused, open ones cut; the receiver down too for a while.
      hook.state.down = true;
      await outage(
        'refused',
        async () => {
          await proxy.setMode('refuse');
          proxy.cut();
        },
        3_000,
      );
      setTimeout(() => (hook.state.down = false), 1_500);
      await wait(1_000);
      // A hung server: connections accepted and never answered, open ones carry nothing more.
      await outage('hung', () => proxy.setMode('hang'), REQUEST_TIMEOUT_MS);
      await wait(1_000);
      // Connections cut with the server up: what was in flight fails, the next statement reconnects.
      await outage(
        'cut',
        async () => {
          proxy.cut();
        },
        0,
      );
      await wait(1_000);
      await writers.stop();
      await probe('after');
      expect(poller.statuses.filter((s) => s !== 200 && s !== 503), 'long-polls answer 200 or 503').toEqual([]);

      const answers: Answer[] = writers.answers;
      const bad = answers.filter((a) => a.status !== 201 && a.status !== 503);
      expect(bad, 'every write answers 201 or 503: never 500, never a dropped connection').toEqual([]);
      const refused = answers.filter((a) => a.status === 503);
      expectOutageAnswers(answers, 503, 'unavailable', '5');
      const slowest = Math.max(...answers.map((a) => a.doneAt - a.sentAt));
      expect(slowest, 'every answer within SVC_REQUEST_TIMEOUT_MS').toBeLessThan(REQUEST_TIMEOUT_MS);
      for (const p of phases.filter((p) => p.name !== 'cut')) {
        expect(answered(p.name, p.from, p.to).filter((a) => a.status === 503).length, `503s while ${p.name}`).toBeGreaterThan(0);
      }
      for (const p of phases) expect(p.back, `served again within 5 s after ${p.name}`).toBeLessThan(5_000);
      expect(readiness.filter((r) => r.phase !== 'after' && r.phase !== 'cut').map((r) => [r.phase, r.readyz, r.retryAfter, r.healthz])).toEqual([
        ['refused', 503, '5', 200],
        ['hung', 503, '5', 200],
      ]);
      expect(readiness.find((r) => r.phase === 'after')).toMatchObject({ readyz: 200, healthz: 200 });
      // Every 503 the writers and the long-poller got, and nothing else (/readyz is not counted).
      expect(await metric(base, 'svc_database_errors_total{kind="unavailable"}')).toBe(refused.length + poller.statuses.filter((s) => s === 503).length);

      // Nothing acknowledged is lost: every 201 is in the database (read past the proxy) and reaches the receiver.
      const acknowledged = answers.filter((a) => a.status === 201).map((a) => a.id!);
      const direct = new pg.Client({ connectionString: database.url });
      await direct.connect();
      try {
        const stored = new Set((await direct.query<{ id: string }>(`select id from records where collection = 'items'`)).rows.map((r) => r.id));
        expect(acknowledged.filter((id) => !stored.has(id)), 'acknowledged writes missing from the database').toEqual([]);
        await waitFor(() => acknowledged.every((id) => hook.delivered.has(id)), 'every acknowledged write delivered', 90_000, 100);
        // A delivery whose result was lost to a cut is sent again once its lease runs out (at least once).
        await waitFor(async () => (await direct.query(`select 1 from delivery_jobs where state <> 'delivered' limit 1`)).rowCount === 0, 'every job delivered', 30_000, 100);
      } finally {
        await direct.end();
      }
      // The stream stayed open through every fault and, like the long-poller, has every acknowledged write's event.
      const streamed = () => new Set(stream.events().filter((f) => f.event === 'record.created').map((f) => (JSON.parse(f.data!) as { recordId: string }).recordId));
      await waitFor(() => acknowledged.every((id) => streamed().has(id) && poller.recordIds.has(id)), 'every acknowledged write in the stream and the long-polls', 30_000, 100);
      expect(stream.events().filter((f) => f.event === 'error')).toEqual([]);
      await poller.stop();
      // The last fault cut every connection, the worker's LISTEN among them: it is open again (wake-ups, not polls).
      await waitFor(async () => {
        const c = new pg.Client({ connectionString: POSTGRES_URL });
        await c.connect();
        const { rowCount } = await c.query(`select 1 from pg_stat_activity where datname = $1 and query = 'LISTEN svc_jobs'`, [new URL(database.url).pathname.slice(1)]);
        await c.end();
        return rowCount === 1;
      }, "the worker's LISTEN connection back", 10_000, 100);
      expect(exits, 'no process exited').toEqual([]);
      const counts = { acknowledged: acknowledged.length, unavailable: refused.length, slowestMs: Math.round(slowest), backMs: phases.map((p) => [p.name, Math.round(p.back!)]) };
      console.log(`[outages postgres] ${JSON.stringify(counts)}`);
    },
    240_000,
  );
});
