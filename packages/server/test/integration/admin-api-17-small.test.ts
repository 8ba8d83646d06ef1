import { afterEach, describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/webhooks/destination-guard.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';

/** Names as a test's DNS answers them: one loopback, one private; anything else does not resolve. */
const resolver: Resolver = async (host) => {
  const answers: Record<string, string> = { 'dev.example.com': '127.0.0.1', 'printer.example.com': '10.1.2.3' };
  const address = answers[host];
  if (!address) throw Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' });
  return [{ address, family: 4 }];
};

/** SPEC §17's favicon, and issue 24 item 7: a refused destination says what to do about it. */
describe.each(DIALECTS)('admin API: favicon and refused destinations (%s)', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('GET /favicon.ico and /admin/favicon.ico answer an icon without credentials', async () => {
    t = await createTestApp(dialect);
    for (const url of ['/favicon.ico', '/admin/favicon.ico']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/x-icon');
      const ico = res.rawPayload;
      // ICONDIR: reserved 0, type 1 (icon), one image; its entry: 32×32, 32 bits, the image right after the directory.
      expect([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4)]).toEqual([0, 1, 1]);
      expect([ico[6], ico[7], ico.readUInt16LE(12)]).toEqual([32, 32, 32]);
      expect(ico.readUInt32LE(18) + ico.readUInt32LE(14)).toBe(ico.length);
      // A BITMAPINFOHEADER of a 32×64 image (the picture and its mask); opaque in the middle, transparent corners.
      expect([ico.readUInt32LE(22), ico.readInt32LE(26), ico.readInt32LE(30)]).toEqual([40, 32, 64]);
      const alpha = (x: number, y: number) => ico[22 + 40 + ((31 - y) * 32 + x) * 4 + 3];
      expect([alpha(16, 16), alpha(0, 0), alpha(31, 31)]).toEqual([255, 0, 0]);
    }
  });

  const post = (url: string, enabled = true) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'local', url, topics: ['record.created'], enabled } });

  it('a loopback or private URL is refused with svc listen, the allow list in force and the docs page named', async () => {
    t = await createTestApp(dialect, {}, { resolver });
    for (const [url, enabled, reason] of [
      ['https://dev.example.com:3000/hook', true, 'dev.example.com resolves to 127.0.0.1, a loopback address'],
      ['https://localhost:3000/hook', true, '"localhost" is a single-label name, which public DNS does not serve'],
      ['https://127.0.0.1:3000/hook', true, '127.0.0.1 is a loopback address'],
      ['https://127.0.0.1:3000/hook', false, '127.0.0.1 is a loopback address'],
      ['https://printer.local/hook', true, 'printer.local is under .local, a name for local networks only'],
    ] as const) {
      const res = await post(url, enabled);
      expect(res.statusCode).toBe(422);
      const problem = res.json();
      expect(problem.code).toBe('destination_refused');
      expect(problem.detail).toBe(
        `Deliveries to this URL would be refused: ${reason}. Not allowed by SVC_WEBHOOK_ALLOW_CIDRS (now: none). To receive webhooks on your own ` +
          'machine, run "svc listen --forward-to <your local URL>": it forwards the event feed there, signed like a delivery, with no webhook ' +
          'target. Or whoever runs svc adds the receiver\'s addresses to SVC_WEBHOOK_ALLOW_CIDRS (for example 127.0.0.0/8,::1/128), for ' +
          'development only: deliveries may then reach those private addresses. See docs/local-development.md.',
      );
      // The field's own message stays the reason alone.
      expect(problem.errors).toEqual([{ path: '/url', message: reason }]);
    }
  });

  it('names the allow list as it is set, and gives no such advice for a name that does not resolve', async () => {
    t = await createTestApp(dialect, { SVC_WEBHOOK_ALLOW_CIDRS: '192.168.0.0/16, ::1' }, { resolver });
    const res = await post('https://printer.example.com/hook');
    expect(res.json().detail).toMatch(/^Deliveries to this URL would be refused: printer\.example\.com resolves to 10\.1\.2\.3, a private address\. Not allowed by SVC_WEBHOOK_ALLOW_CIDRS \(now: 192\.168\.0\.0\/16,::1\/128\)\. .*svc listen/);
    const unknown = await post('https://nowhere.example.com/hook');
    expect(unknown.json()).toMatchObject({ code: 'destination_refused', detail: 'Deliveries to this URL would be refused: nowhere.example.com could not be resolved (ENOTFOUND).' });
    // Not a destination question at all: the URL's shape.
    expect((await post('http://localhost/hook')).json().code).toBe('validation_failed');
  });
});
