import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL, createTestDatabase } from '../helpers/db.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { ADMIN, createRecord, setUp, undoAfterAll } from '../helpers/outage-client.js';
import { startTestServer } from '../helpers/server.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The delivery worker across a PostgreSQL outage that begins while an attempt is under way: the receiver has the
 * delivery, the database is gone before its result can be written. The result is written once the database is back
 * (well within the lease): one attempt, recorded as the 200 it was, the receiver asked once. Written result by result
 * with three quick tries and then left to the lease, the job stayed `delivering` for the whole lease and was sent
 * again; recorded as a failed attempt meanwhile (result_unrecorded), a delivered job would have been retried.
 */
describe('delivery worker during a database outage', () => {
  const undo = undoAfterAll();

  it.skipIf(!POSTGRES_URL)('a result that cannot be written while the database is away is written once it is back: no second attempt', async () => {
    const real = new URL(POSTGRES_URL);
    const proxy = await startTcpProxy({ host: real.hostname, port: Number(real.port || 5432) });
    undo(() => proxy.close());
    const database = await createTestDatabase('postgres');
    undo(() => database.drop());
    let outages = 0;
    const receiver = await startHttpsReceiver({
      handler: async (_req, res) => {
        // The first delivery takes the database down before it is answered, and brings it back 1.5 s later.
        if (outages++ === 0) {
          await proxy.setMode('refuse');
          proxy.cut();
          setTimeout(() => void proxy.setMode('pass'), 1_500);
        }
        res.writeHead(200).end('ok');
      },
    });
    undo(() => receiver.close());
    const caFile = join(database.dir, 'receiver-ca.pem');
    writeFileSync(caFile, receiver.ca);
    const server = await startTestServer({
      database: { ...database, url: proxy.via(database.url), drop: async () => {} },
      env: {
        SVC_ADMIN_EMAIL: ADMIN.email,
        SVC_ADMIN_PASSWORD: ADMIN.password,
        SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
        SVC_WEBHOOK_CA_FILE: caFile,
        SVC_WEBHOOK_LEASE_SECONDS: '30',
      },
    });
    undo(() => server.close());
    const { token } = await setUp(server.baseUrl, `${receiver.url}/hook`);
    const written = await createRecord(server.baseUrl, token, { n: 1 });
    expect(written.status).toBe(201);

    const direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
    undo(() => direct.end());
    const job = async () =>
      (await direct.query<{ id: string; state: string; attempt_count: number }>(`select id, state, attempt_count from delivery_jobs where record_id = $1`, [written.id])).rows[0];
    await waitFor(async () => (await job())?.state === 'delivered', 'the job recorded delivered after the outage', 15_000, 50);
    const { id, attempt_count } = (await job())!;
    const attempts = (await direct.query<{ status_code: number | null; error_code: string | null }>(`select status_code, error_code from delivery_attempts where job_id = $1`, [id])).rows;
    expect({ attempt_count, attempts }).toEqual({ attempt_count: 1, attempts: [{ status_code: 200, error_code: null }] });
    expect(receiver.requests).toHaveLength(1);
  }, 60_000);
});
