/**
 * The admin UI driven in a real browser (Debian Chromium through playwright-core) against a real
 * svc server and a real HTTPS receiver: first-admin setup, login, collections, tokens, webhooks,
 * deliveries (delivered → dead → retry → delivered), a stored-XSS attempt, an expired session that
 * keeps a half-filled form, and phone-width layouts. Screenshots go to test-output/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(`[admin-ui] ${CHROMIUM} not found: browser tests skipped. Install it with "apt-get install -y chromium".`);
}

const SCREENSHOTS = fileURLToPath(new URL('../../../test-output/screenshots/', import.meta.url));

/** What the server's test helpers provide (packages/server/test/helpers/). */
interface TestServer {
  baseUrl: string;
  /** The one-time setup link's token; null when an admin already exists. */
  setupToken: string | null;
  /** The running server's context: its secret box and database, to plant a secret made before SPEC §13. */
  ctx: { box: { seal(value: string, id: string): string }; database: { db: any } };
  close(): Promise<void>;
}
interface HttpsReceiver {
  url: string;
  ca: string;
  requests: { headers: IncomingHttpHeaders; body: string }[];
  setHandler(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): void;
  close(): Promise<void>;
}

const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';
const XSS_NAME = '<img src=x onerror=window.__xss=1>';

describe.skipIf(!hasChromium)('admin UI in a browser', () => {
  let srv: TestServer;
  let receiver: HttpsReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let tmp: string;
  const problems: string[] = [];
  let apiToken = '';
  let webhookId = '';
  let recordId = '';

  const url = (path: string) => new URL(path, srv.baseUrl).toString();
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const byTestId = (id: string) => page.getByTestId(id);
  const answerWith = (status: number) =>
    receiver.setHandler((_req, res) => {
      res.statusCode = status;
      res.setHeader('Content-Type', 'text/plain');
      res.end(status === 200 ? 'ok' : `receiver says ${status}`);
    });

  async function publicApi(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(url(`/api/v1${path}`), {
      method,
      headers: { Authorization: `Bearer ${apiToken}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json().catch(() => null) };
  }

  /** How far the page is wider than the screen, and the first elements that stick out. */
  const horizontalOverflow = () =>
    page.evaluate(() => {
      const wide = Array.from(document.querySelectorAll('body *'))
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
        .map((el) => `${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''}`);
      return { by: document.documentElement.scrollWidth - window.innerWidth, wide: wide.slice(0, 5) };
    });

  async function login(): Promise<void> {
    await byTestId('login-email').fill(EMAIL);
    await byTestId('login-password').fill(PASSWORD);
    await byTestId('login-submit').click();
  }

  beforeAll(async () => {
    // Build the UI the server will serve, so the test never runs against stale assets.
    const { buildAdminUi } = (await import('../build.mjs')) as { buildAdminUi(): Promise<string> };
    await buildAdminUi();
    await mkdir(SCREENSHOTS, { recursive: true });

    const { startHttpsReceiver } = (await import('../../server/test/helpers/https-receiver.js')) as {
      startHttpsReceiver(): Promise<HttpsReceiver>;
    };
    const { startTestServer } = (await import('../../server/test/helpers/server.js')) as {
      startTestServer(opts: { dialect: 'sqlite'; env: Record<string, string> }): Promise<TestServer>;
    };
    receiver = await startHttpsReceiver();
    tmp = await mkdtemp(join(tmpdir(), 'svc-admin-ui-'));
    const caFile = join(tmp, 'receiver-ca.pem');
    await writeFile(caFile, receiver.ca);
    srv = await startTestServer({
      dialect: 'sqlite',
      env: { SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_CA_FILE: caFile, SVC_WEBHOOK_RETRY_SCHEDULE: '0s,1s' },
    });

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      // A CSP violation (inline script, inline style, eval) is reported on the console.
      if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });
    // The UI must use its own <dialog>, never window.confirm/alert.
    page.on('dialog', (dialog) => {
      problems.push(`native dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
  });

  afterAll(async () => {
    await browser?.close();
    await srv?.close();
    await receiver?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('creates the first admin from the setup link, under the strict CSP', async () => {
    expect(srv.setupToken).toBeTruthy();
    const response = await page.goto(url(`/admin/setup?token=${encodeURIComponent(srv.setupToken ?? '')}`));
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await expect.poll(() => byTestId('setup-form').isVisible()).toBe(true);
    await byTestId('setup-email').fill(EMAIL);
    await byTestId('setup-password').fill(PASSWORD);
    await byTestId('setup-password-confirm').fill(PASSWORD);
    await shot('01-setup');
    await byTestId('setup-submit').click();
    await byTestId('nav-collections').waitFor();
    expect(new URL(page.url()).search).toBe(''); // the one-time token left the address bar
    expect(await byTestId('account-email').textContent()).toBe(EMAIL);
  });

  it('logs out and back in', async () => {
    await byTestId('logout').click();
    await byTestId('login-form').waitFor();
    await shot('02-login');
    await byTestId('login-email').fill(EMAIL);
    await byTestId('login-password').fill('wrong password');
    await byTestId('login-submit').click();
    await byTestId('error-banner').waitFor();
    expect(await byTestId('error-request-id').textContent()).not.toBe('');
    await byTestId('login-password').fill(PASSWORD);
    await byTestId('login-submit').click();
    await byTestId('nav-collections').waitFor();
    // A reload restores the session (GET /admin/v1/session) without logging in again.
    await page.reload();
    await byTestId('account-email').waitFor();
    expect(page.url()).toContain('#/collections');
  });

  it('creates a collection with a dynamic field list', async () => {
    await page.goto(url('/admin/#/collections'));
    await byTestId('collection-name').fill('issues');
    await byTestId('cf-name-0').fill('title');
    await byTestId('cf-required-0').check();
    await byTestId('cf-add-field').click();
    await byTestId('cf-name-1').fill('priority');
    await byTestId('cf-type-1').selectOption('integer');
    await shot('03-collections-new');
    await byTestId('collection-submit').click();
    await page.waitForURL(/#\/collections\/issues$/);
    await expect.poll(() => byTestId('field-row').count()).toBe(2);
    // Add a field to the existing collection (PATCH with the whole new field list).
    await byTestId('nf-add-field').click();
    await byTestId('nf-name-0').fill('done');
    await byTestId('nf-type-0').selectOption('boolean');
    await byTestId('schema-submit').click();
    await byTestId('schema-saved').waitFor();
    await expect.poll(() => byTestId('field-row').count()).toBe(3);
    // A duplicate name is refused by the server; the banner quotes the request id.
    await page.goto(url('/admin/#/collections'));
    await byTestId('collection-row').first().waitFor();
    await byTestId('collection-name').fill('issues');
    await byTestId('cf-name-0').fill('title');
    await byTestId('collection-submit').click();
    await byTestId('error-banner').waitFor();
    expect((await byTestId('error-request-id').textContent())?.length).toBeGreaterThan(0);
    await shot('04-collections');
    await byTestId('nav-schema').click();
    expect(await byTestId('schema-json').textContent()).toContain('"priority"');
    await shot('04b-api-schema');
  });

  it('creates an API token and shows it exactly once', async () => {
    await byTestId('nav-tokens').click();
    await byTestId('token-name').fill('ci');
    await byTestId('token-collections').fill('issues');
    await byTestId('token-submit').click();
    const value = byTestId('token-value');
    await value.waitFor();
    apiToken = await value.inputValue();
    expect(apiToken).toMatch(/^svc_pat_/);
    expect(await byTestId('secret-warning').textContent()).toMatch(/only once/i);
    await byTestId('copy-token').click();
    await expect.poll(() => byTestId('copy-status').textContent()).not.toBe('');
    await expect.poll(() => byTestId('token-row').count()).toBe(1);
    await shot('05-tokens-created');
    await page.reload();
    await byTestId('token-row').first().waitFor();
    expect(await value.count()).toBe(0);
    expect(await page.content()).not.toContain(apiToken);
  });

  it("offers exactly the server's token scopes, read from the admin API: a token of events:read alone reads the feed", async () => {
    const { SCOPES } = (await import('../../server/src/auth/api-tokens-store.js')) as { SCOPES: readonly string[] };
    await page.goto(url('/admin/#/tokens'));
    const boxes = byTestId('token-scopes').locator('input[type=checkbox]');
    await expect.poll(() => boxes.count()).toBe(SCOPES.length);
    const offered = await boxes.evaluateAll((els) => els.map((el) => (el as HTMLInputElement).value));
    expect([...offered].sort()).toEqual([...SCOPES].sort());
    await byTestId('token-name').fill('feed reader');
    for (const scope of SCOPES) if (scope !== 'events:read') await byTestId(`token-scope-${scope.replace(':', '-')}`).uncheck();
    await shot('05b-token-scopes');
    await byTestId('token-submit').click();
    const value = byTestId('token-value');
    await value.waitFor();
    const feedToken = await value.inputValue();
    const feed = await fetch(url('/api/v1/events?limit=1'), { headers: { Authorization: `Bearer ${feedToken}` } });
    expect(feed.status).toBe(200);
    const records = await fetch(url('/api/v1/collections/issues/records'), { headers: { Authorization: `Bearer ${feedToken}` } });
    expect(records.status).toBe(403);
  });

  it('refuses a private destination inline, then creates a webhook and shows its secret once', async () => {
    await byTestId('nav-webhooks').click();
    await byTestId('new-webhook').click();
    await byTestId('webhook-name').fill('Receiver');
    await byTestId('webhook-url').fill('https://10.1.2.3/hooks');
    await byTestId('webhook-topics').fill('record.created, record.updated');
    await byTestId('webhook-submit').click();
    const urlError = byTestId('error-url');
    await urlError.waitFor();
    expect((await urlError.textContent())?.trim().length).toBeGreaterThan(0);
    expect(await byTestId('webhook-url').getAttribute('aria-invalid')).toBe('true');
    await shot('06-webhook-refused');

    await byTestId('webhook-url').fill(receiver.url);
    await byTestId('webhook-submit').click();
    const secret = byTestId('webhook-secret');
    await secret.waitFor();
    expect(await secret.inputValue()).toMatch(/^whsec_/);
    expect(await byTestId('webhook-secret-panel').textContent()).toMatch(/never be shown again/i);
    await byTestId('copy-secret').click();
    await expect.poll(() => byTestId('copy-status').textContent()).not.toBe('');
    webhookId = decodeURIComponent(page.url().split('#/webhooks/')[1] ?? '');
    expect(webhookId).toMatch(/^wh_/);
    expect(await byTestId('webhook-topics').inputValue()).toBe('record.created, record.updated');
    await shot('07-webhook-created');
    await page.reload();
    await byTestId('webhook-form').waitFor();
    expect(await secret.count()).toBe(0);

    // SPEC §9's subscription fields: empty means all collections / any change; saved, they come back on a reload.
    expect(await byTestId('webhook-collections').inputValue()).toBe('');
    expect(await byTestId('webhook-ordering').inputValue()).toBe('none');
    const saveSettings = async (collections: string, changed: string, ordering: string) => {
      await byTestId('webhook-collections').fill(collections);
      await byTestId('webhook-changed-fields').fill(changed);
      await byTestId('webhook-ordering').selectOption(ordering);
      await byTestId('webhook-submit').click();
      await byTestId('webhook-saved').waitFor();
      await page.reload();
      await byTestId('webhook-form').waitFor();
    };
    await saveSettings('issues, notes', 'title', 'record');
    expect(await byTestId('webhook-collections').inputValue()).toBe('issues, notes');
    expect(await byTestId('webhook-changed-fields').inputValue()).toBe('title');
    expect(await byTestId('webhook-ordering').inputValue()).toBe('record');
    await saveSettings('', '', 'none');
    expect(await byTestId('webhook-collections').inputValue()).toBe('');
    expect(await byTestId('webhook-ordering').inputValue()).toBe('none');
  });

  it('shows the delivery of a record written through the public API as delivered', async () => {
    const created = await publicApi('POST', '/collections/issues/records', { data: { title: 'First', priority: 1 } });
    expect(created.status).toBe(201);
    recordId = created.json.id;
    await page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
    const row = byTestId('delivery-row').first();
    await row.waitFor({ timeout: 15_000 });
    // No reload: the list refreshes itself while a job is pending or delivering.
    await expect.poll(() => row.getByTestId('delivery-state').textContent(), { timeout: 20_000 }).toBe('delivered');
    expect(receiver.requests.length).toBeGreaterThanOrEqual(1);
    await shot('08-deliveries-delivered');

    await page.goto(url(`/admin/#/collections/issues`));
    await expect.poll(() => byTestId('record-row').count()).toBe(1);
    await shot('09-collection-records');
  });

  it('shows a failing delivery going dead, and retries it to delivered', async () => {
    answerWith(500);
    const updated = await publicApi('PATCH', `/collections/issues/records/${recordId}`, { data: { title: 'Second' } });
    expect(updated.status).toBe(200);
    await page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
    await byTestId('delivery-row').first().waitFor({ timeout: 15_000 });
    const deadRow = page.locator('[data-testid="delivery-row"][data-state="dead"]');
    await deadRow.first().waitFor({ timeout: 25_000 });
    await shot('10-deliveries-dead');

    await deadRow.first().getByTestId('delivery-link').click();
    await expect.poll(() => byTestId('delivery-state').textContent()).toBe('dead');
    expect(await byTestId('attempt-row').count()).toBe(2);
    expect(await byTestId('attempt-status').first().textContent()).toBe('500');
    expect(await byTestId('delivery-envelope').textContent()).toContain('"topic": "record.updated"');
    await shot('11-delivery-dead');

    answerWith(200);
    await byTestId('retry-delivery').click();
    await expect.poll(() => byTestId('delivery-state').textContent(), { timeout: 20_000 }).toBe('delivered');
    expect(await byTestId('retry-delivery').count()).toBe(0);
    expect(await byTestId('attempt-row').count()).toBe(3);
    await shot('12-delivery-retried');

    // The state filter narrows the list.
    await page.goto(url(`/admin/#/deliveries?state=dead`));
    await byTestId('deliveries-table-empty').waitFor();
  });

  it("shows a target's health, recovers its dead jobs, and each attempt's connection", async () => {
    await page.goto(url(`/admin/#/webhooks/${encodeURIComponent(webhookId)}`));
    await byTestId('health-chart').waitFor();
    // So far: delivered at once; then two failed attempts (dead) and the retry that delivered.
    await expect.poll(() => byTestId('health-attempts').textContent()).toBe('2 ok · 2 failed');
    expect(await byTestId('health-success-rate').textContent()).toBe('50 %');
    expect(await byTestId('health-p50').textContent()).toMatch(/^\d+ ms$/);
    const bars = await byTestId('health-bar').evaluateAll((els) => els.map((e) => [Number(e.getAttribute('data-succeeded')), Number(e.getAttribute('data-failed'))]));
    expect(bars.length).toBeGreaterThanOrEqual(24);
    expect(bars.reduce((sum, [ok, failed]) => [sum[0]! + ok!, sum[1]! + failed!], [0, 0])).toEqual([2, 2]);
    expect(await page.locator('[data-testid="health-chart"] rect.chart-failed').count()).toBeGreaterThan(0);
    await shot('17-webhook-health');

    // The job page names the address dialled and the phases' timings.
    await page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
    await byTestId('delivery-link').first().click();
    await byTestId('attempt-row').first().waitFor();
    expect(await byTestId('attempt-remote-address').first().textContent()).toBe('127.0.0.1');
    expect(await byTestId('attempt-timings').first().textContent()).toMatch(/first byte \d+ ms/);
    await shot('18-delivery-diagnostics');

    // A job goes dead; recover sends it back, and it is delivered.
    answerWith(500);
    expect((await publicApi('PATCH', `/collections/issues/records/${recordId}`, { data: { title: 'Third' } })).status).toBe(200);
    const deadRows = page.locator('[data-testid="delivery-row"][data-state="dead"]');
    try {
      // The list refreshes itself while a job is unfinished.
      await page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
      await deadRows.first().waitFor({ timeout: 25_000 });
    } finally {
      answerWith(200);
    }
    await page.goto(url(`/admin/#/webhooks/${encodeURIComponent(webhookId)}`));
    await byTestId('recover-jobs').click();
    await expect.poll(() => byTestId('recover-result').textContent()).toBe('1 dead job sent back for another round.');
    await byTestId('replay-events').click();
    await expect.poll(() => byTestId('replay-result').textContent()).toBe('0 jobs created for missed events.');
    await page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
    await byTestId('delivery-row').first().waitFor();
    await expect.poll(() => deadRows.count(), { timeout: 20_000 }).toBe(0);

    await page.goto(url('/admin/#/webhooks'));
    await byTestId('health-overview').click();
    await expect.poll(() => byTestId('health-row').count()).toBe(1);
    expect(await byTestId('health-rate').first().textContent()).toMatch(/^\d+(\.\d)? %$/);
    await shot('19-health-overview');

    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(url(`/admin/#/webhooks/${encodeURIComponent(webhookId)}`));
      await byTestId('health-chart').waitFor();
      await byTestId('health-attempts').waitFor();
      await shot('20-phone-webhook-health');
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
      await page.goto(url('/admin/#/health'));
      await byTestId('health-row').first().waitFor();
      await shot('21-phone-health-overview');
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  it('shows events live, catches up after a pause, and filters by topic', async () => {
    await page.goto(url('/admin/#/events'));
    await expect.poll(() => byTestId('events-status').textContent()).toBe('live');
    const rowFor = (id: string) => page.locator(`[data-testid=event-row]:has-text("${id}")`);
    const first = await publicApi('POST', '/collections/issues/records', { data: { title: 'Live one', priority: 2 } });
    expect(first.status).toBe(201);
    await expect.poll(() => rowFor(first.json.id).count()).toBe(1);

    await byTestId('events-pause').click();
    expect(await byTestId('events-status').textContent()).toBe('paused');
    const second = await publicApi('POST', '/collections/issues/records', { data: { title: 'While paused', priority: 3 } });
    expect(second.status).toBe(201);
    expect(await rowFor(second.json.id).count()).toBe(0);
    await byTestId('events-pause').click();
    await expect.poll(() => rowFor(second.json.id).count()).toBe(1);
    expect(await rowFor(first.json.id).count()).toBe(1);

    await byTestId('events-topic').selectOption('record.updated');
    await byTestId('events-apply').click();
    await expect.poll(() => byTestId('event-row').count()).toBe(0);
    await expect.poll(() => byTestId('events-status').textContent()).toBe('live');
    const created = await publicApi('POST', '/collections/issues/records', { data: { title: 'Not shown', priority: 4 } });
    const updated = await publicApi('PATCH', `/collections/issues/records/${first.json.id}`, { data: { title: 'Live one, edited' } });
    expect(updated.status).toBe(200);
    await expect.poll(() => byTestId('event-row').count()).toBe(1);
    expect(await rowFor(created.json.id).count()).toBe(0);
    expect(await byTestId('event-row').first().textContent()).toContain('record.updated');
    await shot('events');
  });

  it('renders a hostile webhook name as text', async () => {
    await page.goto(url('/admin/#/webhooks/new'));
    await byTestId('webhook-name').fill(XSS_NAME);
    await byTestId('webhook-url').fill(receiver.url);
    await byTestId('webhook-topics').fill('webhook.test');
    await byTestId('webhook-enabled').uncheck();
    await byTestId('webhook-submit').click();
    await byTestId('webhook-secret').waitFor();
    await expect.poll(() => byTestId('webhook-title').textContent()).toContain(XSS_NAME);
    await page.goto(url('/admin/#/webhooks'));
    await expect.poll(() => byTestId('webhook-row').count()).toBe(2);
    const xssRow = byTestId('webhook-row').filter({ hasText: XSS_NAME });
    expect(await xssRow.count()).toBe(1);
    expect(await xssRow.getByTestId('webhook-state').textContent()).toBe('disabled');
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).toBeUndefined();
    await shot('13-webhooks');

    // Enable from the list, then send a test event to the real receiver's URL from the target page.
    await xssRow.getByTestId('toggle-webhook').click();
    await expect.poll(() => xssRow.getByTestId('webhook-state').textContent()).toBe('enabled');
    await xssRow.getByTestId('webhook-link').click();
    await byTestId('send-test').click();
    await byTestId('test-delivery-link').click();
    await expect.poll(() => byTestId('delivery-state').textContent(), { timeout: 20_000 }).toBe('delivered');
    expect(await byTestId('delivery-envelope').textContent()).toContain('"topic": "webhook.test"');
    expect(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).toBeUndefined();
  });

  it('rotates a secret and deletes a webhook through the confirm dialog', async () => {
    await page.goto(url('/admin/#/webhooks'));
    await byTestId('webhook-row').filter({ hasText: XSS_NAME }).getByTestId('webhook-link').click();
    await byTestId('rotate-secret').click();
    await byTestId('confirm-dialog').waitFor();
    await byTestId('rotate-overlap').fill('60');
    await byTestId('confirm-ok').click();
    expect(await byTestId('webhook-secret').inputValue()).toMatch(/^whsec_/);

    await byTestId('delete-webhook').click();
    await byTestId('confirm-dialog').waitFor();
    expect(await byTestId('confirm-message').textContent()).toContain(XSS_NAME);
    await shot('14-confirm-delete');
    await byTestId('confirm-cancel').click();
    expect(await byTestId('confirm-dialog').count()).toBe(0);
    expect(page.url()).toContain('#/webhooks/wh_');

    await byTestId('delete-webhook').click();
    await byTestId('confirm-ok').click();
    await page.waitForURL(/#\/webhooks$/);
    await expect.poll(() => byTestId('webhook-row').count()).toBe(1);
  });

  it('sends an expired session back to login and keeps the half-filled form', async () => {
    await page.goto(url('/admin/#/webhooks/new'));
    await byTestId('webhook-name').fill('Half filled');
    await byTestId('webhook-url').fill('https://hooks.example.com/svc');
    await context.clearCookies(); // the session cookie is gone, as after expiry
    await byTestId('webhook-submit').click();
    await byTestId('login-form').waitFor();
    expect(await byTestId('login-message').textContent()).toMatch(/session/i);
    await login();
    await page.waitForURL(/#\/webhooks\/new$/);
    expect(await byTestId('webhook-name').inputValue()).toBe('Half filled');
    expect(await byTestId('webhook-url').inputValue()).toBe('https://hooks.example.com/svc');
  });

  it('is usable at phone width', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(url('/admin/#/webhooks'));
    await byTestId('webhook-row').first().waitFor();
    await shot('15-phone-webhooks');
    await page.goto(url(`/admin/#/deliveries`));
    await byTestId('delivery-row').first().waitFor();
    await shot('16-phone-deliveries');
    // Nothing wider than the screen: tables reflow instead of overflowing the page.
    const overflow = await page.evaluate(() => {
      const wide = Array.from(document.querySelectorAll('body *'))
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
        .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
      return { by: document.documentElement.scrollWidth - window.innerWidth, wide: wide.slice(0, 5) };
    });
    expect(overflow).toEqual({ by: 0, wide: [] });
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  /** The admin API from inside the page: the session cookie, and the CSRF token the session answers with. */
  const adminApi = (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> =>
    page.evaluate(async ([m, p, b]) => {
      const current = await (await fetch('/admin/v1/session')).json();
      const res = await fetch(`/admin/v1${p}`, {
        method: m as string,
        headers: { 'X-Svc-CSRF': current.csrfToken, 'Content-Type': 'application/json' },
        body: b === undefined ? undefined : JSON.stringify(b),
      });
      return { status: res.status, json: await res.json().catch(() => null) };
    }, [method, path, body] as const);

  it('filters, sorts and counts the records of a collection, and pages without losing the query', async () => {
    await page.goto(url('/admin/#/collections'));
    await byTestId('collection-row').first().waitFor();
    const fields = [
      { name: 'title', type: 'text', required: true },
      { name: 'priority', type: 'integer', required: false },
      { name: 'status', type: 'text', required: false },
      { name: 'meta', type: 'json', required: false },
    ];
    expect((await adminApi('POST', '/collections', { name: 'tasks', fields })).status).toBe(201);
    const token = await adminApi('POST', '/tokens', { name: 'tasks writer', scopes: ['records:write', 'records:read'], collections: ['tasks'] });
    expect(token.status).toBe(201);
    for (let i = 0; i < 30; i += 1) {
      const res = await fetch(url('/api/v1/collections/tasks/records'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${token.json.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ data: { title: `Task ${String(i).padStart(2, '0')}`, priority: i % 7, status: i < 26 ? 'open' : 'done', meta: { i } } }),
      });
      expect(res.status).toBe(201);
    }

    await page.goto(url('/admin/#/collections/tasks'));
    await expect.poll(() => byTestId('records-count').textContent()).toBe('30 records');
    expect(await byTestId('record-row').count()).toBe(20);
    // json fields do not sort: their header has no button.
    expect(await page.locator('[data-testid="records-header"][data-key=""]').textContent()).toBe('meta');
    expect(await byTestId('sort-meta').count()).toBe(0);

    // Filter to a subset; the count says how many match on all pages together.
    await byTestId('records-filter').fill("status = 'open'");
    await byTestId('records-filter-apply').click();
    await expect.poll(() => byTestId('records-count').textContent()).toBe('26 matching');
    const column = (name: string) => page.locator(`[data-testid="record-row"] td[data-label="${name}"]`).allTextContents();
    expect(new Set(await column('status'))).toEqual(new Set(['open']));

    // Sort by priority: ascending, then descending, shown with an arrow and aria-sort.
    const priorityHeader = page.locator('[data-testid="records-header"][data-key="priority"]');
    await byTestId('sort-priority').click();
    await expect.poll(() => priorityHeader.getAttribute('aria-sort')).toBe('ascending');
    const ascending = (await column('priority')).map(Number);
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
    expect(ascending[0]).toBe(0);
    expect(await byTestId('sort-priority').textContent()).toContain('↑');
    await byTestId('sort-priority').click();
    await expect.poll(() => priorityHeader.getAttribute('aria-sort')).toBe('descending');
    const descending = (await column('priority')).map(Number);
    expect(descending).toEqual([...descending].sort((a, b) => b - a));
    expect(descending[0]).toBe(6);
    expect(await byTestId('sort-priority').textContent()).toContain('↓');
    expect(await byTestId('records-count').textContent()).toBe('26 matching');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('22-records-filtered-sorted');

    // Page 2 keeps the filter and the sort: the 6 remaining open records, continuing the descending order.
    const firstPageIds = await byTestId('record-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
    const listRequests: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (r.url().includes('/collections/tasks/records?')) listRequests.push(r.url());
    };
    page.on('request', onRequest);
    await byTestId('records-pager-next').click();
    await expect.poll(() => byTestId('records-pager-info').textContent()).toBe('Page 2 · 6 shown');
    // The count stays the query's; page 2 does not ask for it again (counting reads every match).
    expect(await byTestId('records-count').textContent()).toBe('26 matching');
    expect(listRequests).toHaveLength(1);
    expect(new URL(listRequests[0]!).searchParams.get('count')).toBeNull();
    page.off('request', onRequest);
    expect(new Set(await column('status'))).toEqual(new Set(['open']));
    const secondPage = (await column('priority')).map(Number);
    expect(secondPage).toEqual([...secondPage].sort((a, b) => b - a));
    expect(secondPage[0]).toBeLessThanOrEqual(descending[descending.length - 1]!);
    const secondPageIds = await byTestId('record-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
    expect(secondPageIds.filter((id) => firstPageIds.includes(id))).toEqual([]);
    expect(await byTestId('filter-error').isHidden()).toBe(true);

    // The query is in the address: a reload shows the same filtered, sorted list from its first page.
    await page.reload();
    await expect.poll(() => byTestId('records-count').textContent()).toBe('26 matching');
    expect(await byTestId('records-filter').inputValue()).toBe("status = 'open'");
    expect(await priorityHeader.getAttribute('aria-sort')).toBe('descending');
    expect(await byTestId('record-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')))).toEqual(firstPageIds);
    // Saving the field form redraws the page's cards; the query in force (changed since the page opened) survives it.
    const titleHeader = page.locator('[data-testid="records-header"][data-key="title"]');
    await byTestId('sort-title').click();
    await expect.poll(() => titleHeader.getAttribute('aria-sort')).toBe('ascending');
    await byTestId('nf-add-field').click();
    await byTestId('nf-name-0').fill('due');
    await byTestId('nf-type-0').selectOption('datetime');
    await byTestId('schema-submit').click();
    await byTestId('schema-saved').waitFor();
    await expect.poll(() => byTestId('sort-due').count()).toBe(1);
    expect(await byTestId('records-filter').inputValue()).toBe("status = 'open'");
    expect(await byTestId('records-count').textContent()).toBe('26 matching');
    expect(await titleHeader.getAttribute('aria-sort')).toBe('ascending');
    expect(await priorityHeader.getAttribute('aria-sort')).toBe('none');

    // A bad filter shows the server's message and where the fault starts.
    await byTestId('records-filter').fill("priority = 'high'");
    await byTestId('records-filter-apply').click();
    await byTestId('filter-error-message').waitFor();
    expect(await byTestId('filter-error-position').textContent()).toBe(' (at position 11)');
    expect(await byTestId('filter-error-caret').textContent()).toBe(`priority = 'high'\n${' '.repeat(11)}^`);
    expect(await byTestId('records-filter').getAttribute('aria-invalid')).toBe('true');
    expect(await byTestId('record-row').count()).toBe(0);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('23-records-bad-filter');

    // At phone width the header is hidden, so the sort is a select; nothing sticks out, the caret line included.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await byTestId('records-filter').fill("title ~ 'task 0'");
      await byTestId('records-filter-apply').click();
      await expect.poll(() => byTestId('records-count').textContent()).toBe('10 matching');
      expect(await byTestId('records-sort').inputValue()).toBe('title');
      await byTestId('records-sort').selectOption('-title');
      await expect.poll(() => column('title')).toEqual(Array.from({ length: 10 }, (_, i) => `Task 0${9 - i}`));
      expect(new URL(page.url()).hash).toContain('sort=-title');
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot('25-phone-records');
      await byTestId('records-filter').fill("title = 'a very long text that goes on and on' && nonexistent_field_name = 1");
      await byTestId('records-filter-apply').click();
      await byTestId('filter-error-caret').waitFor();
      expect(await byTestId('filter-error-position').textContent()).toBe(' (at position 50)');
      // The echo scrolls to the caret, which sits past the phone's width.
      expect(await byTestId('filter-error-caret').evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot('26-phone-records-bad-filter');
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }

    await byTestId('records-filter-clear').click();
    await expect.poll(() => byTestId('records-count').textContent()).toBe('30 records');
    expect(await byTestId('filter-error').isHidden()).toBe(true);
  });

  it('switches a field indexed on and off', async () => {
    const indexedIn = async () => {
      const schema = await adminApi('GET', '/api/schema');
      const tasks = schema.json.collections.find((c: { name: string }) => c.name === 'tasks');
      return Object.fromEntries(tasks.fields.map((f: { name: string; indexed: boolean }) => [f.name, f.indexed]));
    };
    await page.goto(url('/admin/#/collections/tasks'));
    const toggle = page.locator('[data-testid^="field-indexed-"][data-field="priority"]');
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);
    expect(await page.locator('[data-testid^="field-indexed-"][data-field="meta"]').isDisabled()).toBe(true);
    const status = byTestId(`field-indexed-status-${await toggle.getAttribute('id').then((id) => id!.split('-').pop())}`);
    expect(await status.textContent()).toBe('not indexed');

    await toggle.check();
    await expect.poll(() => status.textContent()).toBe('indexed');
    expect(await toggle.isEnabled()).toBe(true);
    expect(await indexedIn()).toEqual({ title: false, priority: true, status: false, meta: false, due: false });
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('24-collection-indexed');
    // The page shows the saved state after a reload too.
    await page.reload();
    await expect.poll(() => toggle.isChecked()).toBe(true);

    await toggle.uncheck();
    await expect.poll(() => status.textContent()).toBe('not indexed');
    expect(await indexedIn()).toEqual({ title: false, priority: false, status: false, meta: false, due: false });
    await page.reload();
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);

    // A 17th index is refused: the switch goes back, and the banner gives the server's reason.
    const wide = Array.from({ length: 17 }, (_, i) => ({ name: `f${i}`, type: 'integer', required: false, indexed: i < 16 }));
    expect((await adminApi('POST', '/collections', { name: 'wide', fields: wide })).status).toBe(201);
    await page.goto(url('/admin/#/collections/wide'));
    await byTestId('field-indexed-16').waitFor();
    expect(await byTestId('field-indexed-15').isChecked()).toBe(true);
    await byTestId('field-indexed-16').click(); // not check(): the refusal unchecks it again at once
    await byTestId('error-banner').waitFor();
    await expect.poll(() => byTestId('field-indexed-status-16').textContent()).toBe('not indexed');
    expect(await byTestId('field-indexed-16').isChecked()).toBe(false);
    expect(await byTestId('error-banner').textContent()).toContain('at most 16 indexed fields');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('27-collection-indexed-refused');
    expect((await adminApi('GET', '/collections/wide')).json.fields.filter((f: { indexed: boolean }) => f.indexed)).toHaveLength(16);

    // A new collection's fields can be indexed from the start (not json ones).
    await page.goto(url('/admin/#/collections'));
    await byTestId('collection-row').first().waitFor();
    await byTestId('collection-name').fill('notes');
    await byTestId('cf-name-0').fill('slug');
    await byTestId('cf-indexed-0').check();
    await byTestId('cf-add-field').click();
    await byTestId('cf-name-1').fill('body');
    await byTestId('cf-indexed-1').check();
    await byTestId('cf-type-1').selectOption('json');
    expect(await byTestId('cf-indexed-1').isDisabled()).toBe(true);
    expect(await byTestId('cf-indexed-1').isChecked()).toBe(false);
    await byTestId('collection-submit').click();
    await page.waitForURL(/#\/collections\/notes$/);
    expect((await adminApi('GET', '/collections/notes')).json.fields).toEqual([
      { name: 'slug', type: 'text', required: false, indexed: true },
      { name: 'body', type: 'json', required: false, indexed: false },
    ]);
    await expect.poll(() => byTestId('field-indexed-status-0').textContent()).toBe('indexed');
  });

  it("sets a target's receiver: scheme, algorithm, headers retyped to change, rate limit; the ed25519 key signs a real delivery", async () => {
    await page.goto(url('/admin/#/webhooks/new'));
    await byTestId('webhook-name').fill('Standard receiver');
    await byTestId('webhook-url').fill(receiver.url);
    await byTestId('webhook-topics').fill('webhook.test');
    // ed25519 goes with the Standard Webhooks scheme only: the algorithm is chosen there and nowhere else.
    expect(await byTestId('webhook-algorithm').isDisabled()).toBe(true);
    await byTestId('webhook-scheme').selectOption('standard');
    await byTestId('webhook-algorithm').selectOption('ed25519');
    await byTestId('webhook-scheme').selectOption('both');
    expect(await byTestId('webhook-algorithm').isDisabled()).toBe(true);
    expect(await byTestId('webhook-algorithm').inputValue()).toBe('hmac-sha256');
    await byTestId('webhook-scheme').selectOption('standard');
    await byTestId('webhook-algorithm').selectOption('ed25519');
    await byTestId('webhook-rate-limit').fill('5');

    // A refused header comes back as errors[].path /headers/Host and is shown on its row.
    const addHeader = async (i: number, name: string, value: string) => {
      await byTestId('headers-add').click();
      await byTestId(`header-name-${i}`).fill(name);
      await byTestId(`header-value-${i}`).fill(value);
    };
    await addHeader(0, 'Host', 'example.com');
    await byTestId('webhook-submit').click();
    await byTestId('error-headers-Host').waitFor();
    expect(await byTestId('header-name-0').getAttribute('aria-invalid')).toBe('true');
    await shot('28-webhook-header-refused');
    await byTestId('header-name-0').fill('X-Api-Key');
    await byTestId('header-value-0').fill('key-12345678');
    await addHeader(1, 'X-Tenant', 'acme-corp');
    await byTestId('webhook-submit').click();

    // An ed25519 target has a public key instead of a secret, in the panel and on the page.
    const publicKey = await byTestId('webhook-new-public-key').inputValue();
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(await byTestId('webhook-secret').count()).toBe(0);
    const id = decodeURIComponent(page.url().split('#/webhooks/')[1] ?? '');
    await byTestId('receiver-facts').waitFor();
    expect(await byTestId('webhook-public-key').inputValue()).toBe(publicKey);
    await byTestId('copy-public-key').click();
    await expect.poll(() => byTestId('copy-public-key-status').textContent()).not.toBe('');
    expect(await byTestId('receiver-scheme').textContent()).toContain('Standard Webhooks');
    expect(await byTestId('receiver-algorithm').textContent()).toBe('Ed25519');
    expect(await byTestId('receiver-header').allTextContents()).toEqual(['X-Api-Key: …5678', 'X-Tenant: …corp']);
    expect(await byTestId('receiver-rate-limit').textContent()).toBe('5 attempts per second');
    expect(await page.content()).not.toContain('key-12345678');
    await shot('29-webhook-ed25519');

    // The receiver gets the headers typed and a v1a signature that the public key verifies.
    await byTestId('send-test').click();
    const deliveryId = await byTestId('test-delivery-link').textContent();
    await expect.poll(() => receiver.requests.filter((r) => r.headers['webhook-id'] === deliveryId).length, { timeout: 20_000 }).toBe(1);
    const got = receiver.requests.find((r) => r.headers['webhook-id'] === deliveryId)!;
    expect([got.headers['x-api-key'], got.headers['x-tenant'], got.headers['svc-signature']]).toEqual(['key-12345678', 'acme-corp', undefined]);
    const signature = String(got.headers['webhook-signature']);
    expect(signature).toMatch(/^v1a,/);
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey.slice(5), 'base64').toString('base64url') }, format: 'jwk' });
    const signed = Buffer.from(`${deliveryId}.${String(got.headers['webhook-timestamp'])}.${got.body}`);
    expect(verify(null, signed, key, Buffer.from(signature.slice(4), 'base64'))).toBe(true);

    // Editing: saved names with masked placeholders; an untouched list is not sent (a PATCH would replace it).
    // What the form sent; it returns once the page has drawn the saved target again (a new form, not the old one).
    const patchBody = async (save: () => Promise<void>) => {
      await byTestId('webhook-form').evaluate((el) => el.setAttribute('data-before-save', ''));
      const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/webhooks/${id}`));
      await save();
      const body = (await sent).postDataJSON() as Record<string, unknown>;
      await page.locator('[data-testid="webhook-form"]:not([data-before-save])').waitFor();
      return body;
    };
    await page.reload();
    await byTestId('header-name-1').waitFor();
    expect(await byTestId('header-value-0').inputValue()).toBe('');
    expect(await byTestId('header-value-0').getAttribute('placeholder')).toBe('…5678');
    await byTestId('webhook-rate-limit').fill('');
    const untouched = await patchBody(() => byTestId('webhook-submit').click());
    expect(untouched).not.toHaveProperty('headers');
    expect(untouched.rateLimit).toBeNull();
    await expect.poll(() => byTestId('receiver-rate-limit').textContent()).toBe('No limit');

    // Changing the list asks for every kept value again, and sends exactly the rows shown.
    await byTestId('header-remove-1').click();
    await byTestId('webhook-submit').click();
    expect(await byTestId('header-value-0').evaluate((el) => (el as HTMLInputElement).validationMessage)).toMatch(/re-enter/i);
    await byTestId('headers-keep').click();
    expect(await byTestId('header-name-1').inputValue()).toBe('X-Tenant');
    await byTestId('header-remove-1').click();
    await byTestId('header-value-0').fill('key-abcdefgh');
    const retyped = await patchBody(() => byTestId('webhook-submit').click());
    expect(retyped.headers).toEqual({ 'X-Api-Key': 'key-abcdefgh' });
    await expect.poll(() => byTestId('receiver-header').allTextContents()).toEqual(['X-Api-Key: …efgh']);
    await byTestId('header-remove-0').click();
    expect((await patchBody(() => byTestId('webhook-submit').click())).headers).toBeNull();
    await byTestId('receiver-headers-none').waitFor();

    // Back to svc: the algorithm follows to HMAC, and the answer shows the new secret once.
    await byTestId('webhook-scheme').selectOption('svc');
    expect(await patchBody(() => byTestId('webhook-submit').click())).toMatchObject({ signatureScheme: 'svc', signatureAlgorithm: 'hmac-sha256' });
    expect(await byTestId('webhook-secret').inputValue()).toMatch(/^whsec_/);
    await expect.poll(() => byTestId('receiver-algorithm').textContent()).toBe('HMAC-SHA256');
    expect(await byTestId('webhook-public-key').count()).toBe(0);

    // A secret made before SPEC §13 (not standard base64) must be rotated first: the 409 shows by the scheme.
    const oldSecret = `whsec_${randomBytes(24).toString('base64url').replace(/^./, '-')}`;
    await srv.ctx.database.db.updateTable('webhooks').set({ secret_sealed: srv.ctx.box.seal(oldSecret, id) }).where('id', '=', id).execute();
    await page.reload();
    await byTestId('webhook-scheme').selectOption('standard');
    await byTestId('webhook-submit').click();
    await byTestId('error-signatureScheme').waitFor();
    expect(await byTestId('error-signatureScheme').textContent()).toMatch(/rotate/i);
    expect((await adminApi('GET', `/webhooks/${id}`)).json.signatureScheme).toBe('svc');

    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await addHeader(0, 'X-Long', 'v'.repeat(300));
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
      await shot('30-phone-webhook-receiver');
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    expect((await adminApi('DELETE', `/webhooks/${id}`)).status).toBe(204);
  });

  it('raised no script error, CSP violation or native dialog', () => {
    expect(problems).toEqual([]);
  });
});
