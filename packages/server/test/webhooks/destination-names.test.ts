import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/webhooks/destination-guard.js';
import { createDeliveryResolver } from '../../src/webhooks/dns-resolver.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { createDeliveryRig, type DeliveryRig } from '../helpers/delivery.js';
import { startDnsServer } from '../helpers/dns-server.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { waitFor } from '../helpers/wait.js';

/**
 * SPEC §12 "Destination names", from outside: URLs refused for their name or text at save, at enable and at
 * delivery, even while the name resolves to a public address, unless every address is in SVC_WEBHOOK_ALLOW_CIDRS.
 * Names resolve through an injected resolver: public-looking answers without touching the internet, and nothing is
 * ever dialled but loopback (a public address is always listed after a loopback one, and refused before any dial).
 */

const PUBLIC = '93.184.216.34';

/** Every name resolves to a public address, as a split-horizon or search-domain answer may make it; looks are kept. */
function publicResolver(lookups: string[], overrides: Record<string, string[]> = {}): Resolver {
  return async (host) => {
    lookups.push(host);
    const name = host.toLowerCase().replace(/\.$/, '');
    return (overrides[name] ?? [PUBLIC]).map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
}

const REFUSED = [
  'https://intranet/hook',
  'https://intranet./hook',
  'https://printer.local/',
  'https://PRINTER.Local./',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://nas.home.arpa/',
  'https://abcdefghijklmnop.onion/',
  'https://app.localhost/',
  'https://exa\tmple.com/',
  'https://example.com/a\nb',
  // (NUL is refused earlier, as in every text of a body: validation_failed.)
  'https://example.com/\u0001',
  'https://example.com/\u007f',
  ' https://example.com/',
  'https://example.com:0/',
];

describe.each(DIALECTS)('destination names through the admin API (%s)', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const post = (url: string, enabled?: boolean) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'n', url, topics: ['record.created'], ...(enabled === undefined ? {} : { enabled }) } });
  const patch = (id: string, payload: object) => t.app.inject({ method: 'PATCH', url: `/admin/v1/webhooks/${id}`, headers: t.admin.headers, payload });

  it('refuses them at save, enabled or disabled, without asking DNS, while the name resolves to a public address', async () => {
    const lookups: string[] = [];
    t = await createTestApp(dialect, {}, { resolver: publicResolver(lookups) });
    expect((await post('https://example.com/hook')).statusCode).toBe(201);
    lookups.length = 0;
    for (const url of REFUSED) {
      for (const enabled of [true, false]) {
        const res = await post(url, enabled);
        expect(res.statusCode, `${JSON.stringify(url)} enabled=${enabled}`).toBe(422);
        const body = res.json() as { code: string; errors: Array<{ path: string; message: string }> };
        expect(body.code, `${JSON.stringify(url)}: ${res.body}`).toBe('destination_refused');
        expect(body.errors[0]!.path).toBe('/url');
      }
    }
    // An empty allow list excuses nothing, so no name was looked up (a .onion name must never reach DNS).
    expect(lookups).toEqual([]);
    const list = (await t.app.inject({ method: 'GET', url: '/admin/v1/webhooks', headers: t.admin.headers })).json() as { items: Array<{ url: string }> };
    expect(list.items.map((w) => w.url)).toEqual(['https://example.com/hook']);
  });

  it('refuses a new URL by PATCH, and enabling a target whose name became refused', async () => {
    const lookups: string[] = [];
    t = await createTestApp(dialect, {}, { resolver: publicResolver(lookups) });
    const created = await post('https://example.com/hook');
    const id = (created.json() as { id: string }).id;
    for (const url of REFUSED) {
      const res = await patch(id, { url });
      expect(res.statusCode, JSON.stringify(url)).toBe(422);
      expect((res.json() as { code: string }).code).toBe('destination_refused');
    }
    // A target saved before these rules existed, disabled: enabling it applies them.
    expect((await patch(id, { enabled: false })).statusCode).toBe(200);
    await t.ctx.database.db.updateTable('webhooks').set({ url: 'https://printer.local/hook' }).where('id', '=', id).execute();
    const enable = await patch(id, { enabled: true });
    expect(enable.statusCode).toBe(422);
    expect((enable.json() as { code: string; detail: string }).code).toBe('destination_refused');
    expect((enable.json() as { detail: string }).detail).toContain('.local');
    const target = (await t.app.inject({ method: 'GET', url: `/admin/v1/webhooks/${id}`, headers: t.admin.headers })).json() as { enabled: boolean };
    expect(target.enabled).toBe(false);
  });

  it('lets the allow list excuse a name only when every address it resolves to is inside it, checked on enable', async () => {
    const lookups: string[] = [];
    const resolver = publicResolver(lookups, { 'intranet': ['10.1.2.3'], 'printer.local': ['10.1.2.4', '10.1.2.5'], 'nas.home.arpa': ['10.1.2.6', PUBLIC] });
    t = await createTestApp(dialect, { SVC_WEBHOOK_ALLOW_CIDRS: '10.0.0.0/8' }, { resolver });
    expect((await post('https://intranet/hook')).statusCode).toBe(201);
    expect((await post('https://printer.local/hook')).statusCode).toBe(201);
    const mixed = await post('https://nas.home.arpa/hook');
    expect(mixed.statusCode).toBe(422);
    expect((mixed.json() as { code: string }).code).toBe('destination_refused');
    expect((await post('https://metadata.google.internal/')).statusCode).toBe(422);
    // Saved disabled: the allow list might excuse the name, so the look-up waits for enabling.
    lookups.length = 0;
    const held = await post('https://nas.home.arpa/hook', false);
    expect(held.statusCode).toBe(201);
    expect(lookups).toEqual([]);
    const enable = await patch((held.json() as { id: string }).id, { enabled: true });
    expect(enable.statusCode).toBe(422);
    expect((enable.json() as { code: string }).code).toBe('destination_refused');
    expect(lookups).toEqual(['nas.home.arpa']);
    // An address literal is known without a look-up: an allowed one excuses port 0 or a tab, another does not.
    expect((await post('https://10.9.9.9:0/', false)).statusCode).toBe(201);
    expect((await post(`https://${PUBLIC}:0/`, false)).statusCode).toBe(422);
    expect((await post(`https://${PUBLIC}/\t`, false)).statusCode).toBe(422);
  });
});

describe.each(DIALECTS)('destination names at delivery (%s)', (dialect) => {
  let rig: DeliveryRig | undefined;
  let receiver: HttpsReceiver | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await rig?.close();
    await receiver?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('fails the job of a target whose saved URL became refused with destination_refused, and dials nothing', async () => {
    // A receiver whose certificate names every host below, so that a delivery the rules let through succeeds.
    receiver = await startHttpsReceiver({ altNames: ['127.0.0.1', 'localhost', 'hooks.example.com', 'split.example.com', 'intranet', 'printer.local'] });
    dir = mkdtempSync(join(tmpdir(), 'svc-destination-names-'));
    writeFileSync(join(dir, 'ca.pem'), receiver.ca);
    const resolver = publicResolver([], {
      'hooks.example.com': ['127.0.0.1'],
      'intranet': ['127.0.0.1'],
      // Loopback first: without the rule, the dial goes there (and succeeds), never to the public address.
      'printer.local': ['127.0.0.1', PUBLIC],
      'split.example.com': ['127.0.0.1', PUBLIC],
    });
    rig = await createDeliveryRig(dialect, { SVC_WEBHOOK_CA_FILE: join(dir, 'ca.pem'), SVC_WEBHOOK_RETRY_SCHEDULE: '0s' }, { resolver });
    const port = receiver.port;
    const urls: Record<string, string> = {
      ok: `https://hooks.example.com:${port}/ok`,
      excused: `https://intranet:${port}/excused`,
      local: `https://printer.local:${port}/local`,
      tab: `https://split.exa\tmple.com:${port}/tab`,
      port0: 'https://split.example.com:0/port0',
    };
    const ids: Record<string, string> = {};
    for (const label of Object.keys(urls)) ids[label] = (await rig.target(['record.created'], `https://hooks.example.com:${port}/${label}`)).id;
    // Saved before the rules, or written by hand: the row holds a URL the API would refuse today.
    for (const [label, url] of Object.entries(urls)) {
      await rig.ctx.database.db.updateTable('webhooks').set({ url }).where('id', '=', ids[label]!).execute();
    }
    await rig.ctx.database.signal.notify();
    await rig.createRecord({ title: 'x' });

    const jobs = await waitFor(async () => {
      const items = (await rig!.admin('GET', '/admin/v1/deliveries?limit=100')).json().items as Array<{ webhookId: string; state: string; lastError: { code: string; message: string } | null }>;
      return items.length === 5 && items.every((j) => j.state === 'delivered' || j.state === 'dead') ? items : null;
    }, 'every job to finish', 20_000);
    const outcome = Object.fromEntries(Object.entries(ids).map(([label, id]) => {
      const job = jobs.find((j) => j.webhookId === id)!;
      return [label, job.state === 'delivered' ? 'delivered' : job.lastError!.code];
    }));
    expect(outcome).toEqual({ ok: 'delivered', excused: 'delivered', local: 'destination_refused', tab: 'destination_refused', port0: 'destination_refused' });
    expect(receiver.requests.map((r) => r.path).sort()).toEqual(['/excused', '/ok']);
    const local = jobs.find((j) => j.webhookId === ids.local)!;
    expect(local.lastError!.message).toContain('.local');
  });
});

// Held by c-ares itself (RFC 7686), which the delivery resolver uses: kept as a check, since the guard's docs promise
// that a .onion name never reaches a DNS server, also when an allow list makes the guard look it up.
describe('the delivery resolver and .onion', () => {
  it('never asks a DNS server for a .onion name', async () => {
    const dns = await startDnsServer({ 'abc.onion': { a: ['127.0.0.1'] }, 'abc.test': { a: ['127.0.0.1'] } });
    const dir = mkdtempSync(join(tmpdir(), 'svc-onion-'));
    writeFileSync(join(dir, 'hosts'), '');
    const resolve = createDeliveryResolver({ timeoutMs: 2_000, servers: [dns.address], hostsFile: join(dir, 'hosts') });
    try {
      expect(await resolve('abc.test')).toEqual([{ address: '127.0.0.1', family: 4 }]);
      await expect(resolve('ABC.onion.')).rejects.toMatchObject({ code: 'ENOTFOUND' });
      expect(dns.queries('abc.onion')).toBe(0);
      expect(dns.queries('abc.test')).toBeGreaterThan(0);
    } finally {
      resolve.close();
      await dns.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
