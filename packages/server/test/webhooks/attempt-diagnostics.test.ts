import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList, type Resolver } from '../../src/webhooks/destination-guard.js';
import { createDeliveryClient, type AttemptOutcome, type DeliveryClientOptions } from '../../src/webhooks/http-client.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { waitFor } from '../helpers/wait.js';

/** SPEC §10 attempt diagnostics: the address dialled and each phase's timing, null where the phase did not happen. */

const loopback = parseCidrList('127.0.0.0/8');
const resolver: Resolver = async (hostname) => {
  if (hostname === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};
const request = { headers: { 'content-type': 'application/json' }, body: '{"hello":"world"}' };
const ms = expect.any(Number);

describe('the delivery client reports what it dialled and what each phase took', () => {
  let receiver: HttpsReceiver;
  const clients: Array<{ close(): Promise<void> }> = [];
  const client = (options: Partial<DeliveryClientOptions> = {}) => {
    const c = createDeliveryClient({ resolver, allow: loopback, ca: [receiver.ca], connectionsPerOrigin: 1, timeoutMs: 3_000, ...options });
    clients.push(c);
    return c;
  };
  const traceOf = (o: AttemptOutcome) => o.trace;
  beforeAll(async () => {
    receiver = await startHttpsReceiver();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => receiver.close());

  it('an IP literal over https: no DNS phase; connect, TLS and first byte measured; the address is the one dialled', async () => {
    const outcome = await client().send({ url: `https://127.0.0.1:${receiver.port}/hook`, ...request });
    expect(outcome).toMatchObject({ kind: 'response', statusCode: 200 });
    expect(traceOf(outcome)).toEqual({ remoteAddress: '127.0.0.1', timings: { dnsMs: null, connectMs: ms, tlsMs: ms, firstByteMs: ms } });
  });

  it('a host name: the look-up is measured too, and the address is the resolved one', async () => {
    const outcome = await client().send({ url: `https://localhost:${receiver.port}/hook`, ...request });
    expect(traceOf(outcome)).toEqual({ remoteAddress: '127.0.0.1', timings: { dnsMs: ms, connectMs: ms, tlsMs: ms, firstByteMs: ms } });
  });

  it('a request on a kept-alive connection made no look-up, connect or handshake of its own', async () => {
    const c = client();
    const url = `https://localhost:${receiver.port}/hook`;
    const first = await c.send({ url, ...request });
    const second = await c.send({ url, ...request });
    expect(traceOf(first).timings.tlsMs).toEqual(ms);
    expect(traceOf(second)).toEqual({ remoteAddress: '127.0.0.1', timings: { dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: ms } });
  });

  it('an http URL is refused before anything is dialled: every phase null', async () => {
    const outcome = await client().send({ url: `http://127.0.0.1:${receiver.port}/hook`, ...request });
    expect(outcome).toMatchObject({ kind: 'failure', code: 'destination_refused' });
    expect(traceOf(outcome)).toEqual({ remoteAddress: null, timings: { dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null } });
  });

  it('a failed handshake still names the address dialled and the connect time; TLS and first byte are null', async () => {
    const outcome = await client({ ca: [] }).send({ url: `https://127.0.0.1:${receiver.port}/hook`, ...request });
    expect(outcome).toMatchObject({ kind: 'failure', code: 'tls_failed' });
    expect(traceOf(outcome)).toEqual({ remoteAddress: '127.0.0.1', timings: { dnsMs: null, connectMs: ms, tlsMs: null, firstByteMs: null } });
  });

  it('a name that does not resolve: nothing dialled', async () => {
    const outcome = await client().send({ url: `https://nowhere.invalid:${receiver.port}/hook`, ...request });
    expect(outcome).toMatchObject({ kind: 'failure', code: 'dns_failed' });
    expect(traceOf(outcome).remoteAddress).toBeNull();
  });
});

describe.each(DIALECTS)('attempt diagnostics in the admin API (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  it('stores each attempt with its address and timings: delivered and failed attempts alike', async () => {
    rig = await createDeliveryRig(dialect);
    let answers = 0;
    rig.receiver.setHandler((_req, res) => res.writeHead(answers++ === 0 ? 500 : 200).end('x'));
    await rig.target(['record.created'], `https://127.0.0.1:${rig.receiver.port}/hook`);
    await rig.createRecord({ title: 'diagnosed' });
    const list = await waitFor(async () => {
      const items = (await rig.admin('GET', '/admin/v1/deliveries')).json().items;
      return items.length === 1 && items[0].state === 'delivered' ? items : null;
    }, 'the delivery');
    const job = await rig.job(list[0].id);
    expect(job.attempts).toHaveLength(2);
    expect(job.attempts[0]).toMatchObject({ statusCode: 500, error: { code: 'http_status' }, remoteAddress: '127.0.0.1' });
    expect(job.attempts[1]).toMatchObject({ statusCode: 200, error: null, remoteAddress: '127.0.0.1' });
    for (const a of job.attempts) {
      expect(a.timings.dnsMs).toBeNull();
      expect(a.timings.firstByteMs).toEqual(ms);
      expect(Object.keys(a.timings)).toEqual(['dnsMs', 'connectMs', 'tlsMs', 'firstByteMs']);
    }
    // The first attempt opened the connection; the retry may have reused it (then its connect and TLS are null).
    expect(job.attempts[0].timings).toMatchObject({ connectMs: ms, tlsMs: ms });
  });
});
