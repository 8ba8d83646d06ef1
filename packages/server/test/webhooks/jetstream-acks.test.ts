import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BrokerSetting } from '../../src/config/brokers.js';
import type { BrokerConnection } from '../../src/webhooks/senders/broker-connection.js';
import { natsConnection } from '../../src/webhooks/senders/nats.js';
import type { TargetRow } from '../../src/webhooks/targets-store.js';
import { BROKER_URLS, uniqueName, useNatsStream } from '../helpers/broker-rig.js';
import { exited } from '../helpers/processes.js';
import { freePort, portOpen } from '../helpers/server.js';
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
    // Each acknowledgement is its own message's: the sequence it names holds that message's body.
    for (const n of [0, 1, 77, 150, 298, 299]) {
      const stored = await nats.jsm.streams.getMessage(STREAM, { seq: seqs[n]! });
      expect(Buffer.from(stored!.data).equals(body(n))).toBe(true);
    }
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

  it('an answer that is not a PubAck (a core subscriber answering first): broker_refused, and the connection keeps reading', async () => {
    const odd = `${PREFIX}odd`;
    const answers: Record<string, string> = { null: 'null', empty: '{}', text: 'not json', array: '[1]', nostream: '{"stream":"","seq":1}' };
    const subs = Object.entries(answers).map(([name, answer]) => watcher.subscribe(`${odd}.${name}`, { callback: (_err, m) => m.respond(answer) }));
    await watcher.flush();
    try {
      const c = await open();
      for (const name of Object.keys(answers)) {
        const r = await c.publish(target(`${odd}.${name}`), { id: uniqueName('del_'), body: body(6), headers: {} }, 5_000);
        expect(r, name).toEqual({ ok: false, code: 'broker_refused', message: 'The answer to the publish was not a JetStream PubAck.' });
      }
      // A `null` answer once threw inside the client's reader, which then stopped reading the connection.
      expect((await c.publish(target(`${PREFIX}.afterodd`), { id: uniqueName('del_'), body: body(7), headers: {} }, 5_000)).ok).toBe(true);
    } finally {
      for (const sub of subs) sub.unsubscribe();
    }
  });

  it('a message over the server\'s max_payload: broker_refused before anything is sent', async () => {
    const c = await open();
    const before = (await nats.jsm.streams.info(STREAM)).state.messages;
    const r = await c.publish(target(`${PREFIX}.big`), { id: uniqueName('del_'), body: Buffer.alloc(2 * 1024 * 1024, 0x61), headers: {} }, 5_000);
    expect(r).toMatchObject({ ok: false, code: 'broker_refused', message: expect.stringMatching(/^NATS refused the message/) });
    expect((await c.publish(target(`${PREFIX}.big`), { id: uniqueName('del_'), body: body(8), headers: {} }, 5_000)).ok).toBe(true);
    expect((await nats.jsm.streams.info(STREAM)).state.messages).toBe(before + 1);
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

/**
 * Permissions (a nats-server of the test's own, with users): a publish the server refuses on its subject, and the reply
 * subscription refused, each fail their attempts with the server's words (broker_refused) instead of waiting out the
 * deadline as unanswered.
 */
describe.skipIf(!BROKER_URLS.nats)('JetStream acknowledgements under permissions', () => {
  let server: ChildProcess | null = null;
  let port = 0;
  const store = mkdtempSync(join(tmpdir(), 'svc-nats-perm-'));
  let conn: BrokerConnection | null = null;
  beforeAll(async () => {
    port = await freePort();
    const config = join(store, 'nats.conf');
    writeFileSync(
      config,
      `listen: "127.0.0.1:${port}"
jetstream { store_dir: "${join(store, 'js')}" }
accounts {
  A {
    jetstream: enabled
    users: [
      { user: "admin", password: "admin" }
      { user: "nopub", password: "nopub", permissions: { publish: { deny: ["perm.denied.>"] } } }
      { user: "nosub", password: "nosub", permissions: { subscribe: { deny: ["_INBOX.>"] } } }
    ]
  }
}
`,
    );
    server = spawn('nats-server', ['-c', config], { stdio: 'ignore' });
    await waitFor(() => portOpen(port), `nats-server on ${port}`, 20_000, 50);
    const nc = await natsConnect({ servers: `127.0.0.1:${port}`, user: 'admin', pass: 'admin' });
    await (await jetstreamManager(nc)).streams.add({ name: 'PERM', subjects: ['perm.>'] });
    await nc.close();
  });
  afterEach(async () => {
    await conn?.close();
    conn = null;
  });
  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await exited(server);
    }
    rmSync(store, { recursive: true, force: true });
  });

  const open = async (user: string) => {
    conn = natsConnection({ name: 'n', kind: 'nats', url: `nats://${user}:${user}@127.0.0.1:${port}` }, { state: () => {} }, 30_000);
    conn.start();
    await waitFor(() => conn!.connected, 'connected', 10_000, 20);
    return conn;
  };

  it('a subject the user may not publish to: broker_refused with the server\'s permission error, long before the deadline', async () => {
    const c = await open('nopub');
    const started = performance.now();
    const r = await c.publish(target('perm.denied.a'), { id: uniqueName('del_'), body: body(1), headers: {} }, 30_000);
    expect(r).toMatchObject({ ok: false, code: 'broker_refused', message: expect.stringMatching(/^NATS refused the message: .*Permissions Violation for Publish to "perm\.denied\.a"/i) });
    expect(performance.now() - started).toBeLessThan(10_000);
    // The same connection still publishes where it may.
    expect((await c.publish(target('perm.allowed.a'), { id: uniqueName('del_'), body: body(2), headers: {} }, 5_000)).ok).toBe(true);
  });

  it('a user that may not subscribe to _INBOX.>: broker_refused naming the acknowledgements\' subscription, long before the deadline', async () => {
    const c = await open('nosub');
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      const r = await c.publish(target('perm.allowed.b'), { id: uniqueName('del_'), body: body(3), headers: {} }, 30_000);
      expect(r).toMatchObject({ ok: false, code: 'broker_refused', message: expect.stringMatching(/^NATS refused svc's subscription for JetStream's acknowledgements: .*Permissions Violation for Subscription/i) });
      expect(performance.now() - started).toBeLessThan(10_000);
    }
  });
});
