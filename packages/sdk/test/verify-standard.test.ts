import { generateKeyPairSync, randomBytes, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';
import {
  MemoryDedupeStore,
  WebhookVerificationError,
  handleDelivery,
  verifyDelivery,
  type VerifyDeliveryOptions,
} from '../src/verify/index.js';
import { SECRET, deliveryId, envelopeBody, signedDelivery, v1 } from './helpers/deliveries.js';

// Deliveries here are signed by the reference library (npm `standardwebhooks`) or by node:crypto, never by the SDK.

const T = 1767225600;
const NOW = T * 1000;
const NEW = `whsec_${randomBytes(32).toString('base64')}`;
const OLD = `whsec_${randomBytes(32).toString('base64')}`;

interface Delivery {
  id: string;
  body: string;
  headers: Record<string, string>;
}

function standardHeaders(id: string, timestamp: number, signature: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  };
}

/** A `standard` delivery: `webhook-signature` from `Webhook.sign`, one entry per secret. */
interface DeliveryOptions {
  secrets?: string[];
  timestamp?: number;
  id?: string;
  body?: string;
}

function standardDelivery(options: DeliveryOptions = {}): Delivery {
  const id = options.id ?? deliveryId();
  const body = options.body ?? envelopeBody(id);
  const timestamp = options.timestamp ?? T;
  const signature = (options.secrets ?? [NEW])
    .map((s) => new Webhook(s).sign(id, new Date(timestamp * 1000), body))
    .join(' ');
  return { id, body, headers: standardHeaders(id, timestamp, signature) };
}

interface Ed25519Pair {
  publicKey: string;
  privateKey: KeyObject;
}

/** node:crypto's key pair, its public key shown as svc shows it: `whpk_` + standard base64 of the 32 raw bytes. */
function ed25519Pair(): Ed25519Pair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { publicKey: `whpk_${raw.toString('base64')}`, privateKey };
}

function v1a(privateKey: KeyObject, id: string, timestamp: number, body: string | Buffer): string {
  const message = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(body)]);
  return `v1a,${cryptoSign(null, message, privateKey).toString('base64')}`;
}

function ed25519Delivery(keys: Ed25519Pair[], options: { timestamp?: number; id?: string } = {}): Delivery {
  const id = options.id ?? deliveryId();
  const body = envelopeBody(id);
  const timestamp = options.timestamp ?? T;
  const signature = keys.map((k) => v1a(k.privateKey, id, timestamp, body)).join(' ');
  return { id, body, headers: standardHeaders(id, timestamp, signature) };
}

/** The refusal's code and message, or code 'ok'; an error other than WebhookVerificationError fails the test. */
function refusal(options: VerifyDeliveryOptions): Promise<{ code: string; message: string }> {
  return verifyDelivery(options).then(
    () => ({ code: 'ok', message: '' }),
    (error: unknown) => {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return { code: error.code, message: error.message };
    },
  );
}

const codeOf = async (options: VerifyDeliveryOptions) => (await refusal(options)).code;
const messageOf = async (options: VerifyDeliveryOptions) => (await refusal(options)).message;

describe('Standard Webhooks v1 (HMAC): deliveries signed by standardwebhooks', () => {
  const d = standardDelivery();
  const verify = (headers: Record<string, string | string[]> | Headers, rawBody: string | Buffer = d.body) =>
    codeOf({ secret: NEW, headers, rawBody, now: NOW });

  it('verify, and return the envelope', async () => {
    const envelope = await verifyDelivery({ secret: NEW, headers: d.headers, rawBody: d.body, now: NOW });
    expect(envelope).toEqual(JSON.parse(d.body));
    // The reference agrees on the same delivery (it reads the real clock, so signed now).
    const fresh = standardDelivery({ timestamp: Math.floor(Date.now() / 1000) });
    expect(new Webhook(NEW).verify(fresh.body, fresh.headers)).toEqual(JSON.parse(fresh.body));
  });

  it('with any letter case, a Fetch Headers, a Buffer body, a secret without whsec_ or its padding', async () => {
    const upper = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(await verify(upper)).toBe('ok');
    expect(await verify(new Headers(d.headers))).toBe('ok');
    expect(await verify(d.headers, Buffer.from(d.body))).toBe('ok');
    for (const secret of [NEW.slice('whsec_'.length), NEW.replace(/=+$/, '')]) {
      expect(await codeOf({ secret, headers: d.headers, rawBody: d.body, now: NOW }), secret).toBe('ok');
    }
  });

  it('during a rotation: two entries, accepted with either secret, in either order', async () => {
    const both = standardDelivery({ secrets: [NEW, OLD] });
    const reversed = standardDelivery({ secrets: [OLD, NEW], id: both.id, body: both.body });
    for (const r of [both, reversed]) {
      for (const secrets of [[NEW], [OLD], [NEW, OLD], [OLD, NEW], [SECRET, OLD]]) {
        expect(await codeOf({ secrets, headers: r.headers, rawBody: r.body, now: NOW }), secrets.join()).toBe('ok');
      }
    }
    const single = standardDelivery({ secrets: [OLD] });
    expect(await codeOf({ secret: NEW, secrets: [OLD], headers: single.headers, rawBody: single.body, now: NOW })).toBe(
      'ok',
    );
  });

  it('skipping entries of other identifiers, and a header sent twice (joined by Headers with ", ")', async () => {
    const signature = `v2,${'A'.repeat(44)} ${d.headers['webhook-signature']} v9,whatever`;
    expect(await verify({ ...d.headers, 'webhook-signature': signature })).toBe('ok');
    const h = new Headers({ 'webhook-id': d.id, 'webhook-timestamp': String(T) });
    const old = standardDelivery({ secrets: [OLD], id: d.id, body: d.body });
    h.append('webhook-signature', old.headers['webhook-signature']!);
    h.append('webhook-signature', d.headers['webhook-signature']!);
    expect(await verify(h)).toBe('ok');
  });

  it('300 s away in either direction; not 301', async () => {
    const at = (offset: number) => standardDelivery({ timestamp: T + offset, id: d.id, body: d.body }).headers;
    for (const offset of [-300, 300]) expect(await verify(at(offset)), String(offset)).toBe('ok');
    for (const offset of [-301, 301]) expect(await verify(at(offset)), String(offset)).toBe('timestamp_stale');
  });

  it('refuses a tampered body, another secret, another webhook-id or timestamp (both are signed)', async () => {
    const bytes = Buffer.from(d.body);
    for (const i of [0, bytes.length >> 1, bytes.length - 1]) {
      const tampered = Buffer.from(bytes);
      tampered[i] = tampered[i]! ^ 0x01;
      expect(await verify(d.headers, tampered)).toBe('signature_mismatch');
    }
    expect(await verify(d.headers, `${d.body} `)).toBe('signature_mismatch');
    expect(await codeOf({ secret: OLD, headers: d.headers, rawBody: d.body, now: NOW })).toBe('signature_mismatch');
    expect(await verify({ ...d.headers, 'webhook-id': deliveryId() })).toBe('signature_mismatch');
    expect(await verify({ ...d.headers, 'webhook-timestamp': String(T + 1) })).toBe('signature_mismatch');
    expect(await verify({ ...d.headers, 'webhook-signature': `v2,${'A'.repeat(44)}` })).toBe('signature_mismatch');
  });

  it('refuses an old replay as timestamp_stale before looking at the signature', async () => {
    const old = standardDelivery({ timestamp: T - 3600 });
    expect(await codeOf({ secret: OLD, headers: old.headers, rawBody: old.body, now: NOW })).toBe('timestamp_stale');
  });

  it('missing_header for each absent or empty header', async () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const { [name]: _, ...without } = d.headers;
      expect(await verify(without), name).toBe('missing_header');
      expect(await verify({ ...d.headers, [name]: '' }), name).toBe('missing_header');
    }
  });

  it('malformed_header, never a TypeError, for headers of the wrong form', async () => {
    const good = d.headers['webhook-signature']!.slice(3);
    const signatures = [
      'abc',
      'v1',
      ',abc',
      'v1,',
      'v1,!!!!',
      `v1,${good.slice(0, -4)}`, // 29 bytes
      `v1,${good}AAAA`, // 35 bytes
      `v1,${good.replace(/=$/, '')}`, // unpadded
      `v1,${Buffer.alloc(32, 0xff).toString('base64url')}=`, // base64url: `_` for `/`
      `v1,${good.slice(0, 10)}=${good.slice(11)}`,
      `v1a,${good}`, // 32 bytes: an ed25519 signature has 64
      Array.from({ length: 17 }, () => `v1,${good}`).join(' '),
    ];
    for (const sig of signatures) {
      expect(await verify({ ...d.headers, 'webhook-signature': sig }), sig).toBe('malformed_header');
    }
    for (const ts of ['1767225600.0', '-1', ' 1', '1e9', '17672256001767225600']) {
      expect(await verify({ ...d.headers, 'webhook-timestamp': ts }), ts).toBe('malformed_header');
    }
    for (const id of ['msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 'del_', 'del_a b', 'del_é']) {
      expect(await verify({ ...d.headers, 'webhook-id': id }), id).toBe('malformed_header');
    }
    expect(await verify({ ...d.headers, 'webhook-timestamp': [String(T), String(T + 1)] } as never)).toBe(
      'malformed_header',
    );
  });

  it('says why when no secret could have signed a v1 entry (a secret made before the base64 form)', async () => {
    // The fixture's secret has `_` in its body: not standard base64.
    const message = await messageOf({ secret: SECRET, headers: d.headers, rawBody: d.body, now: NOW });
    expect(message).toMatch(/no secret given is whsec_ followed by base64/);
  });

  it('malformed_body and id_mismatch after the signature, as for svc deliveries', async () => {
    const notEnvelope = standardDelivery({ id: d.id, body: '{"hello":"world"}' });
    expect(await verify(notEnvelope.headers, notEnvelope.body)).toBe('malformed_body');
    // Signed by svc with an id that differs from its body's: refused, since the body's id is the de-duplication key.
    const other = standardDelivery({ id: deliveryId(), body: d.body });
    expect(await verify(other.headers, other.body)).toBe('id_mismatch');
  });
});

describe('Standard Webhooks v1a (ed25519): signed with node:crypto, verified with publicKey', () => {
  const current = ed25519Pair();
  const previous = ed25519Pair();

  it('verifies, and refuses a tampered body or another key', async () => {
    const d = ed25519Delivery([current]);
    const options = { publicKey: current.publicKey, headers: d.headers, now: NOW };
    expect(await verifyDelivery({ ...options, rawBody: d.body })).toEqual(JSON.parse(d.body));
    expect(await codeOf({ ...options, rawBody: d.body.replace('"version":2', '"version":3') })).toBe(
      'signature_mismatch',
    );
    expect(await codeOf({ ...options, publicKey: previous.publicKey, rawBody: d.body })).toBe('signature_mismatch');
    expect(await codeOf({ ...options, rawBody: d.body, headers: { ...d.headers, 'webhook-id': deliveryId() } })).toBe(
      'signature_mismatch',
    );
  });

  it('during a rotation: two v1a entries, accepted with either public key', async () => {
    const d = ed25519Delivery([current, previous]);
    const stranger = ed25519Pair().publicKey;
    for (const publicKeys of [[current.publicKey], [previous.publicKey], [stranger, previous.publicKey]]) {
      expect(await codeOf({ publicKeys, headers: d.headers, rawBody: d.body, now: NOW })).toBe('ok');
    }
    expect(await codeOf({ publicKeys: [ed25519Pair().publicKey], headers: d.headers, rawBody: d.body, now: NOW })).toBe(
      'signature_mismatch',
    );
  });

  it('a receiver with secrets and public keys checks each entry with its own kind of key', async () => {
    const d = ed25519Delivery([current]);
    const hmacEntry = new Webhook(NEW).sign(d.id, new Date(NOW), d.body);
    const headers = { ...d.headers, 'webhook-signature': `${hmacEntry} ${d.headers['webhook-signature']}` };
    expect(await codeOf({ secret: OLD, publicKey: current.publicKey, headers, rawBody: d.body, now: NOW })).toBe('ok');
    expect(await codeOf({ secret: NEW, publicKey: previous.publicKey, headers, rawBody: d.body, now: NOW })).toBe('ok');
    expect(await codeOf({ secret: OLD, publicKey: previous.publicKey, headers, rawBody: d.body, now: NOW })).toBe(
      'signature_mismatch',
    );
  });

  it('says so when v1a meets secrets only; refuses Svc-* headers to a receiver with keys only', async () => {
    const d = ed25519Delivery([current]);
    expect(await messageOf({ secret: NEW, headers: d.headers, rawBody: d.body, now: NOW })).toMatch(/pass publicKey/);
    const s = signedDelivery({ timestamp: T });
    expect(await codeOf({ publicKey: current.publicKey, headers: s.headers, rawBody: s.body, now: NOW })).toBe(
      'signature_mismatch',
    );
  });

  it('a runtime without Ed25519 in Web Crypto: an Error that says so; v1 entries still verify there', async () => {
    const subtle = globalThis.crypto.subtle;
    const importKey = subtle.importKey.bind(subtle) as (...args: unknown[]) => Promise<CryptoKey>;
    const spy = vi.spyOn(subtle, 'importKey').mockImplementation(((...args: unknown[]) =>
      JSON.stringify(args[2]).includes('Ed25519')
        ? Promise.reject(new DOMException('Unrecognized algorithm name', 'NotSupportedError'))
        : importKey(...args)) as never);
    try {
      const d = ed25519Delivery([current]);
      const refused = verifyDelivery({ publicKey: current.publicKey, headers: d.headers, rawBody: d.body, now: NOW });
      await expect(refused).rejects.toThrow(/Web Crypto has no Ed25519/);
      await expect(refused).rejects.not.toBeInstanceOf(WebhookVerificationError);
      const h = standardDelivery();
      const options = { secret: NEW, publicKey: current.publicKey, headers: h.headers, rawBody: h.body, now: NOW };
      expect(await codeOf(options)).toBe('ok');
    } finally {
      spy.mockRestore();
    }
  });

  it('a malformed public key is a TypeError: it is the receiver configuration, not the request', async () => {
    const d = ed25519Delivery([current]);
    const raw = Buffer.from(current.publicKey.slice(5), 'base64');
    const bad = [
      current.publicKey.slice(5),
      `whpk_${raw.subarray(1).toString('base64')}`,
      `whpk_${raw.toString('base64url')}`,
      `whsec_${raw.toString('base64')}`,
      '',
      42,
    ];
    for (const publicKey of bad) {
      await expect(
        verifyDelivery({ publicKey: publicKey as string, headers: d.headers, rawBody: d.body, now: NOW }),
        String(publicKey),
      ).rejects.toThrow(TypeError);
    }
  });
});

describe("signatureScheme 'both': all six headers", () => {
  function bothDelivery(): Delivery {
    const s = signedDelivery({ timestamp: T, secrets: [NEW] });
    const std = standardDelivery({ id: s.id, body: s.body });
    return { ...s, headers: { ...s.headers, ...std.headers } };
  }

  it('verify, with the Svc-* headers checked and the webhook-* ones ignored', async () => {
    const d = bothDelivery();
    expect(await codeOf({ secret: NEW, headers: d.headers, rawBody: d.body, now: NOW })).toBe('ok');
    // A forged webhook-signature does not matter; a forged Svc-Signature does.
    const badStandard = { ...d.headers, 'webhook-signature': `v1,${'A'.repeat(43)}=` };
    expect(await codeOf({ secret: NEW, headers: badStandard, rawBody: d.body, now: NOW })).toBe('ok');
    const badSvc = { ...d.headers, 'svc-signature': v1(OLD, T, d.body) };
    expect(await codeOf({ secret: NEW, headers: badSvc, rawBody: d.body, now: NOW })).toBe('signature_mismatch');
    // The reference library verifies the same request from its own headers.
    const fresh = signedDelivery({ secrets: [NEW] });
    const now = Math.floor(Date.now() / 1000);
    const standard = standardDelivery({ id: fresh.id, body: fresh.body, timestamp: now });
    const headers = { ...fresh.headers, ...standard.headers };
    expect(new Webhook(NEW).verify(fresh.body, headers)).toEqual(JSON.parse(fresh.body));
  });

  it('missing_header names both sets when neither is there', async () => {
    const d = bothDelivery();
    const message = await messageOf({ secret: NEW, headers: { 'content-type': 'application/json' }, rawBody: d.body });
    expect(message).toMatch(/Svc-Signature.*webhook-signature/);
  });
});

describe('handleDelivery: one de-duplication key, the delivery id, whichever headers carry it', () => {
  it('a copy in the other scheme is a duplicate, in either direction', async () => {
    const store = new MemoryDedupeStore();
    for (const [first, second] of [
      ['svc', 'standard'],
      ['standard', 'svc'],
    ] as const) {
      const svc = signedDelivery({ secrets: [NEW] });
      const standard = standardDelivery({ id: svc.id, body: svc.body, timestamp: Math.floor(Date.now() / 1000) });
      const copies = { svc, standard };
      const runs: string[] = [];
      const handle = (d: Delivery, scheme: string) =>
        handleDelivery({ secret: NEW, headers: d.headers, rawBody: d.body, store }, () => void runs.push(scheme));
      expect((await handle(copies[first], first)).duplicate).toBe(false);
      const again = await handle(copies[second], second);
      expect(again.duplicate).toBe(true);
      expect(again.envelope.id).toBe(svc.id);
      expect(runs).toEqual([first]);
    }
  });

  it('a copy in the other scheme while the first run holds the id is delivery_in_progress (409)', async () => {
    const store = new MemoryDedupeStore();
    const svc = signedDelivery({ secrets: [NEW] });
    const standard = standardDelivery({ id: svc.id, body: svc.body, timestamp: Math.floor(Date.now() / 1000) });
    let finish!: () => void;
    const holding = new Promise<void>((resolve) => (finish = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = handleDelivery({ secret: NEW, headers: svc.headers, rawBody: svc.body, store }, async () => {
      started();
      await holding;
    });
    await running;
    const copy = handleDelivery({ secret: NEW, headers: standard.headers, rawBody: standard.body, store }, () => {});
    await expect(copy).rejects.toMatchObject({ code: 'delivery_in_progress', status: 409 });
    finish();
    expect((await first).duplicate).toBe(false);
  });
});
