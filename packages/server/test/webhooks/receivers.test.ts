import { createPublicKey, randomBytes, verify } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, signatureValid, type DeliveryRig } from '../helpers/delivery.js';
import type { ReceivedRequest } from '../helpers/https-receiver.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §13: every receiver. Deliveries are checked the way receivers check them: the Standard Webhooks reference
 * library (npm `standardwebhooks`) for `v1`, node:crypto for `v1a` (ed25519), the seed's scheme by hand
 * (signatureValid); never with svc's own signing code.
 */
const plain = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));

/** Whether the reference library accepts the delivery with this secret. */
const standardValid = (req: ReceivedRequest, secret: string, body = req.body): boolean => {
  try {
    new Webhook(secret).verify(body, plain(req.headers));
    return true;
  } catch {
    return false;
  }
};

/** Whether any `v1a,` entry is an ed25519 signature of `<webhook-id>.<webhook-timestamp>.<body>` by this public key. */
const ed25519Valid = (req: ReceivedRequest, publicKey: string, body = req.body): boolean => {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url') }, format: 'jwk' });
  const message = Buffer.from(`${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${body}`);
  return String(req.headers['webhook-signature'])
    .split(' ')
    .filter((e) => e.startsWith('v1a,'))
    .some((e) => verify(null, message, key, Buffer.from(e.slice(4), 'base64')));
};

const SVC_HEADERS = ['svc-delivery', 'svc-timestamp', 'svc-signature'];
const STANDARD_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];

describe.each(DIALECTS)('receivers: schemes, ed25519, static headers (%s)', (dialect) => {
  let rig: DeliveryRig;
  afterEach(async () => rig?.close());

  const create = async (body: Record<string, unknown>) => {
    const res = await rig.admin('POST', '/admin/v1/webhooks', { name: 'r', url: `${rig.receiver.url}/hook`, topics: ['record.created'], ...body });
    return { status: res.statusCode, body: res.json() };
  };
  /** One record, its delivery: the request the receiver got (the n-th, counting from 1). */
  const delivered = async (n: number) => {
    await rig.createRecord({ title: `r${n}` });
    await waitFor(() => rig.receiver.requests.length >= n, `delivery ${n}`);
    return rig.receiver.requests[n - 1]!;
  };

  it('new secrets are whsec_ and standard base64 of 32 bytes', async () => {
    rig = await createDeliveryRig(dialect);
    const { body } = await create({});
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(body.secret.slice(6), 'base64')).toHaveLength(32);
    expect(body).toMatchObject({ signatureScheme: 'svc', signatureAlgorithm: 'hmac-sha256', publicKey: null, headers: null, rateLimit: null });
  });

  it('svc (the default) sends the seed\'s three headers only, unchanged', async () => {
    rig = await createDeliveryRig(dialect);
    const { body: target } = await create({});
    const req = await delivered(1);
    for (const name of SVC_HEADERS) expect(req.headers[name]).toBeDefined();
    for (const name of STANDARD_HEADERS) expect(req.headers[name]).toBeUndefined();
    expect(signatureValid(req.headers, req.body, [target.secret])).toBe(true);
  });

  it('standard: verified by the standardwebhooks library with the secret as shown; tampered bodies and other secrets refused', async () => {
    rig = await createDeliveryRig(dialect);
    const { status, body: target } = await create({ signatureScheme: 'standard' });
    expect(status).toBe(201);
    expect(target.signatureScheme).toBe('standard');
    const req = await delivered(1);
    for (const name of SVC_HEADERS) expect(req.headers[name]).toBeUndefined();
    expect(req.headers['webhook-id']).toBe(JSON.parse(req.body).id);
    expect(req.headers['webhook-id']).toMatch(/^del_/);
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(standardValid(req, target.secret)).toBe(true);
    expect(new Webhook(target.secret).verify(req.body, plain(req.headers))).toEqual(JSON.parse(req.body));
    expect(standardValid(req, target.secret, req.body.replace('r1', 'r2'))).toBe(false);
    expect(standardValid(req, `whsec_${randomBytes(32).toString('base64')}`)).toBe(false);
  });

  it('both: all six headers; the library verifies one set and the seed\'s scheme the other', async () => {
    rig = await createDeliveryRig(dialect);
    const { body: target } = await create({ signatureScheme: 'both' });
    const req = await delivered(1);
    for (const name of [...SVC_HEADERS, ...STANDARD_HEADERS]) expect(req.headers[name]).toBeDefined();
    expect(req.headers['svc-delivery']).toBe(req.headers['webhook-id']);
    expect(req.headers['svc-timestamp']).toBe(req.headers['webhook-timestamp']);
    expect(standardValid(req, target.secret)).toBe(true);
    expect(signatureValid(req.headers, req.body, [target.secret])).toBe(true);
    expect(standardValid(req, target.secret, `${req.body} `)).toBe(false);
    expect(signatureValid(req.headers, `${req.body} `, [target.secret])).toBe(false);
  });

  it('a rotation\'s overlap: one entry per secret, newest first; the library verifies with either', async () => {
    rig = await createDeliveryRig(dialect);
    const { body: target } = await create({ signatureScheme: 'both' });
    const rotated = (await rig.admin('POST', `/admin/v1/webhooks/${target.id}/rotate-secret`, { overlapSeconds: 3600 })).json();
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const req = await delivered(1);
    const entries = String(req.headers['webhook-signature']).split(' ');
    expect(entries).toHaveLength(2);
    expect(standardValid(req, rotated.secret)).toBe(true);
    expect(standardValid(req, target.secret)).toBe(true);
    // Newest first: the first entry alone verifies with the new secret.
    expect(standardValid({ ...req, headers: { ...req.headers, 'webhook-signature': entries[0] } }, rotated.secret)).toBe(true);
    expect(signatureValid(req.headers, req.body, [target.secret])).toBe(true);
    expect(signatureValid(req.headers, req.body, [rotated.secret])).toBe(true);
  });

  it('a secret of the old alphabet is refused standard and both (409) until it is rotated', async () => {
    rig = await createDeliveryRig(dialect);
    const { body: target } = await create({});
    // As every target made before SPEC §13 holds it: base64url without padding.
    const old = `whsec_${randomBytes(32).toString('base64url')}`;
    await rig.ctx.database.db.updateTable('webhooks').set({ secret_sealed: rig.ctx.box.seal(old, target.id) }).where('id', '=', target.id).execute();
    for (const scheme of ['standard', 'both']) {
      const refused = await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { signatureScheme: scheme });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().code).toBe('conflict');
    }
    expect((await rig.admin('GET', `/admin/v1/webhooks/${target.id}`)).json().signatureScheme).toBe('svc');
    const rotated = (await rig.admin('POST', `/admin/v1/webhooks/${target.id}/rotate-secret`, { overlapSeconds: 0 })).json();
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const switched = await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { signatureScheme: 'standard' });
    expect(switched.statusCode).toBe(200);
    expect(switched.json()).not.toHaveProperty('secret');
    const req = await delivered(1);
    expect(standardValid(req, rotated.secret)).toBe(true);
  });

  it('ed25519: a whpk_ public key instead of a secret, v1a signatures, rotation with overlap', async () => {
    rig = await createDeliveryRig(dialect);
    const { status, body: target } = await create({ signatureScheme: 'standard', signatureAlgorithm: 'ed25519' });
    expect(status).toBe(201);
    expect(target).not.toHaveProperty('secret');
    expect(target.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    // Not secret: every later answer shows it.
    expect((await rig.admin('GET', `/admin/v1/webhooks/${target.id}`)).json().publicKey).toBe(target.publicKey);
    const first = await delivered(1);
    expect(first.headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(ed25519Valid(first, target.publicKey)).toBe(true);
    expect(ed25519Valid(first, target.publicKey, first.body.replace('r1', 'r9'))).toBe(false);

    const rotated = (await rig.admin('POST', `/admin/v1/webhooks/${target.id}/rotate-secret`, { overlapSeconds: 3600 })).json();
    expect(rotated).not.toHaveProperty('secret');
    expect(rotated.publicKey).toMatch(/^whpk_/);
    expect(rotated.publicKey).not.toBe(target.publicKey);
    const second = await delivered(2);
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(ed25519Valid(second, rotated.publicKey)).toBe(true);
    expect(ed25519Valid(second, target.publicKey)).toBe(true);
  });

  it('ed25519 signs the standard scheme only; switching algorithm is new material, shown in that answer', async () => {
    rig = await createDeliveryRig(dialect);
    for (const scheme of ['svc', 'both']) {
      const refused = await create({ signatureScheme: scheme, signatureAlgorithm: 'ed25519' });
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([expect.objectContaining({ path: '/signatureAlgorithm' })]);
    }
    const { body: target } = await create({ signatureScheme: 'standard' });
    const toEd = (await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { signatureAlgorithm: 'ed25519' })).json();
    expect(toEd).not.toHaveProperty('secret');
    expect(toEd.publicKey).toMatch(/^whpk_/);
    const req = await delivered(1);
    expect(ed25519Valid(req, toEd.publicKey)).toBe(true);
    expect(standardValid(req, target.secret)).toBe(false);
    // ed25519 → svc alone would leave ed25519 on the svc scheme: refused; back to hmac, a new secret shown once.
    expect((await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { signatureScheme: 'svc' })).statusCode).toBe(422);
    const back = (await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { signatureScheme: 'both', signatureAlgorithm: 'hmac-sha256' })).json();
    expect(back.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(back.publicKey).toBeNull();
    expect((await rig.admin('GET', `/admin/v1/webhooks/${target.id}`)).json()).not.toHaveProperty('secret');
    const again = await delivered(2);
    expect(standardValid(again, back.secret)).toBe(true);
    expect(signatureValid(again.headers, again.body, [back.secret])).toBe(true);
  });

  it('static headers: sent with every attempt and with webhook.test, shown masked in every answer, sealed at rest', async () => {
    rig = await createDeliveryRig(dialect);
    const headers = { 'X-Api-Key': 'key-7f3e9c1da1b2', Authorization: 'Bearer tok_0123456789', 'X-Short': 'abc' };
    const { status, body: target } = await create({ headers });
    expect(status).toBe(201);
    const masked = { 'X-Api-Key': '…a1b2', Authorization: '…6789', 'X-Short': '…' };
    expect(target.headers).toEqual(masked);
    expect((await rig.admin('GET', `/admin/v1/webhooks/${target.id}`)).json().headers).toEqual(masked);
    expect((await rig.admin('GET', '/admin/v1/webhooks')).json().items[0].headers).toEqual(masked);
    expect((await rig.admin('POST', `/admin/v1/webhooks/${target.id}/rotate-secret`, {})).json().headers).toEqual(masked);
    const renamed = (await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { name: 'renamed' })).json();
    expect(renamed.headers).toEqual(masked);
    expect(renamed.name).toBe('renamed');
    expect((await rig.admin('GET', `/admin/v1/webhooks/${target.id}`)).json().name).toBe('renamed');
    // A dump of the row shows no value.
    const row = JSON.stringify(await rig.ctx.database.db.selectFrom('webhooks').selectAll().where('id', '=', target.id).executeTakeFirstOrThrow());
    for (const value of Object.values(headers)) expect(row).not.toContain(value);

    const req = await delivered(1);
    expect(req.headers['x-api-key']).toBe(headers['X-Api-Key']);
    expect(req.headers.authorization).toBe(headers.Authorization);
    expect(req.headers['x-short']).toBe('abc');
    expect(req.headers['content-type']).toBe('application/json');
    expect((await rig.admin('POST', `/admin/v1/webhooks/${target.id}/test`)).statusCode).toBe(202);
    await waitFor(() => rig.receiver.requests.length >= 2, 'the test delivery');
    const test = rig.receiver.requests[1]!;
    expect(JSON.parse(test.body).topic).toBe('webhook.test');
    expect(test.headers['x-api-key']).toBe(headers['X-Api-Key']);

    // PATCH replaces the whole object; null clears it.
    const replaced = (await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { headers: { 'X-Other': 'other-value-9876' } })).json();
    expect(replaced.headers).toEqual({ 'X-Other': '…9876' });
    const third = await delivered(3);
    expect(third.headers['x-api-key']).toBeUndefined();
    expect(third.headers['x-other']).toBe('other-value-9876');
    expect((await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { headers: null })).json().headers).toBeNull();
    const fourth = await delivered(4);
    expect(fourth.headers['x-other']).toBeUndefined();
  });

  it('refuses every header name and value SPEC §13 lists, each at /headers/<name>', async () => {
    rig = await createDeliveryRig(dialect);
    const names = [
      'Host', 'Content-Length', 'Content-Type', 'Transfer-Encoding', 'Connection', 'Upgrade', 'TE', 'Trailer', 'Keep-Alive', 'Expect', 'User-Agent',
      'traceparent', 'tracestate', 'Proxy-Authorization', 'proxy-x', 'Svc-Signature', 'SVC-Anything', 'webhook-id', 'Webhook-Whatever',
      'content-type', 'bad name', 'bad:name', 'bäd', '',
      // A token, but a JavaScript object's prototype: once accepted, shown, and never sent. And a name past 256 characters.
      '__proto__', `X-${'n'.repeat(255)}`,
    ];
    for (const name of names) {
      const res = await create({ headers: { [name]: 'value' } });
      expect(res.status, name).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors, name).toEqual([expect.objectContaining({ path: `/headers/${name}` })]);
    }
    const values = ['line\r\nInjected: yes', 'tab\there', 'nul\u0000', 'é', 'x'.repeat(1025), '\u007f'];
    for (const value of values) {
      const res = await create({ headers: { 'X-Key': value } });
      expect(res.status, JSON.stringify(value)).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ path: '/headers/X-Key' })]);
    }
    expect((await create({ headers: { 'X-Key': 'x'.repeat(1024), [`X-${'n'.repeat(254)}`]: 'v' } })).status).toBe(201);
    const twice = await create({ headers: { 'X-Key': 'a', 'x-key': 'b' } });
    expect(twice.status).toBe(422);
    const many = await create({ headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) });
    expect(many.status).toBe(422);
    expect(many.body.errors).toEqual([expect.objectContaining({ path: '/headers' })]);
    expect((await create({ headers: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-H${i}`, 'v'])) })).status).toBe(201);
    // A PATCH is checked alike and changes nothing when refused.
    const { body: target } = await create({ headers: { 'X-Key': 'kept-value-1234' } });
    expect((await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { headers: { Host: 'evil' } })).statusCode).toBe(422);
    expect((await rig.admin('GET', `/admin/v1/webhooks/${target.id}`)).json().headers).toEqual({ 'X-Key': '…1234' });
  });

  it('rateLimit: {perSecond: 1…10000} or null, shown in answers', async () => {
    rig = await createDeliveryRig(dialect);
    for (const bad of [{ perSecond: 0 }, { perSecond: 10_001 }, { perSecond: 1.5 }, { perSecond: '5' }, {}, { perSecond: 5, burst: 1 }, 5]) {
      expect((await create({ rateLimit: bad })).status, JSON.stringify(bad)).toBe(422);
    }
    const { body: target } = await create({ rateLimit: { perSecond: 10_000 } });
    expect(target.rateLimit).toEqual({ perSecond: 10_000 });
    expect((await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { rateLimit: { perSecond: 1 } })).json().rateLimit).toEqual({ perSecond: 1 });
    expect((await rig.admin('PATCH', `/admin/v1/webhooks/${target.id}`, { rateLimit: null })).json().rateLimit).toBeNull();
  });
});
