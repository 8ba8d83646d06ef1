import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BrokerSetting } from '../../src/config/brokers.js';
import type { BrokerConnection } from '../../src/webhooks/senders/broker-connection.js';
import { natsConnection } from '../../src/webhooks/senders/nats.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { BROKER_URLS, uniqueName, useNatsStream } from '../helpers/broker-rig.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

/**
 * svc's JetStream publish (senders/jetstream-acks.ts): acknowledgements read from one reply subscription instead of
 * the client's request per message. Each answer JetStream or the server can give, read as the attempt's result; an
 * acknowledgement that never comes, and one lost with the connection. A real nats-server, no mocks.
 */
const PREFIX = uniqueName('jsacks');
const STREAM = PREFIX.toUpperCase();
const body = (n: number) => Buffer.from(`{"version":"1","id":"del_${n}","topic":"record.created","collection":"issues","payload":{"n":${n}}}`);
const target = (subject: string) => ({ type: 'nats', broker: 'n', subject }) as TargetRow;

describe.skipIf(!BROKER_URLS.nats)('JetStream acknowledgements', () => {
  const nats = useNatsStream(STREAM, PREFIX);
  let watcher: NatsConnection;
  let conn: BrokerConnection | null = null;
  let proxy: TcpProxy | null = null;
  beforeAll(async () => {
    watcher = await natsConnect({ servers: new URL(BROKER_URLS.nats).host });
  });
  afterAll(async () => {
    await watcher.close();
  });
  afterEach(async () => {
    await conn?.close();
    await proxy?.close();
    conn = null;
    proxy = null;
  });

  const open = async (url = BROKER_URLS.nats!, timeoutMs = 5_000) => {
    const setting: BrokerSetting = { name: 'n', kind: 'nats', url };
    conn = natsConnection(setting, { state: () => {} }, timeoutMs);
    conn.start();
    await waitFor(() => conn!.connected, 'connected', 10_000, 20);
    return conn;
  };

  it('a PubAck: its stream and sequence; the same delivery id again is JetStream\'s duplicate, stored once', async () => {
    const c = await open();
    const id = uniqueName('del_');
    const message = { id, body: body(1), headers: { 'content-type': 'application/json', 'webhook-id': id } };
    const first = await c.publish(target(`${PREFIX}.a`), message, 5_000);
    expect(first.ok).toBe(true);
    const ack = JSON.parse((first as { snippet: string }).snippet);
    expect(ack).toEqual({ stream: STREAM, seq: expect.any(Number), duplicate: false });
    const again = await c.publish(target(`${PREFIX}.a`), message, 5_000);
    expect(JSON.parse((again as { snippet: string }).snippet)).toEqual({ stream: STREAM, seq: ack.seq, duplicate: true });
    const stored = await nats.jsm.streams.getMessage(STREAM, { seq: ack.seq });
    expect(stored.header.get('Nats-Msg-Id')).toBe(id);
    expect(stored.header.get('webhook-id')).toBe(id);
    expect(Buffer.from(stored.data).equals(body(1))).toBe(true);
  });

  it('many in flight at once: each publish gets its own acknowledgement', async () => {
    const c = await open();
    const results = await Promise.all(Array.from({ length: 300 }, (_, n) => c.publish(target(`${PREFIX}.many`), { id: uniqueName('del_'), body: body(n), headers: {} }, 5_000)));
    expect(results.every((r) => r.ok)).toBe(true);
    const seqs = results.map((r) => JSON.parse((r as { snippet: string }).snippet).seq as number);
    expect(new Set(seqs).size).toBe(300);
  });

  it('a subject no stream captures: no_stream, from the server\'s 503', async () => {
    const c = await open();
    const r = await c.publish(target(`${PREFIX}x.nobody`), { id: uniqueName('del_'), body: body(2), headers: {} }, 5_000);
    expect(r).toEqual({ ok: false, code: 'no_stream', message: `No JetStream stream captures the subject ${PREFIX}x.nobody (no responders).` });
  });

  it('a stream that refuses the message: broker_refused with JetStream\'s own description and code', async () => {
    const full = `${PREFIX}full`;
    await nats.jsm.streams.add({ name: full.toUpperCase(), subjects: [`${full}.>`], max_msgs: 1, discard: 'new' as never });
    try {
      const c = await open();
      expect((await c.publish(target(`${full}.a`), { id: uniqueName('del_'), body: body(3), headers: {} }, 5_000)).ok).toBe(true);
      const r = await c.publish(target(`${full}.a`), { id: uniqueName('del_'), body: body(4), headers: {} }, 5_000);
      expect(r.ok).toBe(false);
      expect(r).toMatchObject({ code: 'broker_refused', message: expect.stringMatching(/^JetStream refused the message: maximum messages exceeded \(10077\)\.$/) });
    } finally {
      await nats.jsm.streams.delete(full.toUpperCase()).catch(() => {});
    }
  });

  it('a message over the server\'s max_payload: broker_refused before anything is sent', async () => {
    const c = await open();
    const r = await c.publish(target(`${PREFIX}.big`), { id: uniqueName('del_'), body: Buffer.alloc(2 * 1024 * 1024, 0x61), headers: {} }, 5_000);
    expect(r).toMatchObject({ ok: false, code: 'broker_refused', message: expect.stringMatching(/^NATS refused the message/) });
  });

  it('a responder that never answers: timeout once the deadline has passed, and not before', async () => {
    // A core subscriber captures the subject (so the server has a responder and sends no 503) and never replies.
    const silent = `${PREFIX}silent.a`;
    const sub = watcher.subscribe(silent);
    await watcher.flush();
    try {
      const c = await open();
      const started = performance.now();
      const r = await c.publish(target(silent), { id: uniqueName('del_'), body: body(5), headers: {} }, 300);
      const took = performance.now() - started;
      expect(r).toEqual({ ok: false, code: 'timeout', message: 'JetStream did not acknowledge within 300 ms.' });
      expect(took).toBeGreaterThanOrEqual(300);
      // Given up at the sweep after the deadline (once a second).
      expect(took).toBeLessThan(2_500);
    } finally {
      sub.unsubscribe();
    }
  });

  it('the connection cut while acknowledgements are awaited: connection_failed at once, not at the deadline; then it reconnects', async () => {
    const upstream = new URL(BROKER_URLS.nats!);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 4222) });
    const silent = `${PREFIX}cut.a`;
    const sub = watcher.subscribe(silent);
    await watcher.flush();
    try {
      const c = await open(proxy.via(BROKER_URLS.nats!), 60_000);
      const waiting = Promise.all(Array.from({ length: 5 }, (_, n) => c.publish(target(silent), { id: uniqueName('del_'), body: body(n), headers: {} }, 60_000)));
      // The publishes have reached the subscriber: their acknowledgements are what is awaited.
      await waitFor(() => sub.getReceived() >= 5, 'the publishes to arrive', 10_000, 10);
      const started = performance.now();
      proxy.cut();
      const results = await waiting;
      expect(performance.now() - started).toBeLessThan(10_000);
      for (const r of results) expect(r).toEqual({ ok: false, code: 'connection_failed', message: 'The connection to the broker "n" was lost before the acknowledgement.' });
      // The client reconnects by itself, its reply subscription with it.
      await waitFor(() => c.connected, 'reconnected', 15_000, 20);
      expect((await c.publish(target(`${PREFIX}.after`), { id: uniqueName('del_'), body: body(9), headers: {} }, 5_000)).ok).toBe(true);
    } finally {
      sub.unsubscribe();
    }
  });
});
