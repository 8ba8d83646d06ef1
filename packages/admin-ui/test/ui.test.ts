/**
 * The admin UI driven in a real browser (Debian Chromium through playwright-core) against a real svc server and a
 * real HTTPS receiver: first-admin setup, login, collections, tokens, webhooks, deliveries (delivered → dead → retry
 * → delivered), target health, the live feed, a stored-XSS attempt, an expired session that keeps a half-filled
 * form, records filtering and indexes, receiver settings, and phone-width layouts. Screenshots go to
 * test-output/screenshots/.
 *
 * Each test makes what it needs (its own collection, token, target and records, named apart from the others') on
 * the file's server (harness.ts), so each passes alone and in any order (issue 28 item 5); the first-run setup has a
 * server of its own, which has no admin yet. After each test: no script error, CSP violation or native dialog.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, EMAIL, PASSWORD, hasChromium, useUi, type HttpsReceiver, type TestServer, type Ui } from './harness.js';

if (!hasChromium) {
  console.warn(`[admin-ui] ${CHROMIUM} not found: browser tests skipped. Install it with "apt-get install -y chromium".`);
}

const SCREENSHOTS = fileURLToPath(new URL('../../../test-output/screenshots/', import.meta.url));
const XSS_NAME = '<img src=x onerror=window.__xss=1>';
/** A page drawn after an answer: long enough for a loaded machine (two browsers and servers share its cores). */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 10_000 });
/** A name no other test of the file uses: collections, tokens and targets of one server stay apart. */
const unique = (prefix: string) => `${prefix}_${randomBytes(4).toString('hex')}`;

/** The page as a test drives it, from the harness: names kept short for the walk-throughs below. */
function useWalk(ui: Ui) {
  const walk = {
    page: undefined as unknown as Page,
    context: undefined as unknown as BrowserContext,
    receiver: undefined as unknown as HttpsReceiver,
    srv: undefined as unknown as TestServer,
  };
  beforeAll(() => {
    Object.assign(walk, { page: ui.page, context: ui.context, receiver: ui.receiver, srv: ui.srv });
  });
  // What each test must leave behind, as the whole walk once checked at its end. The 4xx answers the tests provoke
  // on purpose are logged by Chromium as failed loads; those are not script errors.
  afterEach(() => {
    expect(ui.problems.filter((p) => !p.startsWith('console: Failed to load resource: the server responded with a status of 4'))).toEqual([]);
  });
  return walk;
}

describe.skipIf(!hasChromium)('admin UI in a browser: first run', () => {
  const ui = useUi({}, { firstAdmin: false });
  const w = useWalk(ui);
  const byTestId = (id: string) => ui.byTestId(id);
  const url = (path: string) => ui.url(path);
  const shot = (name: string) => w.page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  it('creates the first admin from the setup link, under the strict CSP', async () => {
    expect(w.srv.setupToken).toBeTruthy();
    const response = await w.page.goto(url(`/admin/setup?token=${encodeURIComponent(w.srv.setupToken ?? '')}`));
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await poll(() => byTestId('setup-form').isVisible()).toBe(true);
    await byTestId('setup-email').fill(EMAIL);
    await byTestId('setup-password').fill(PASSWORD);
    await byTestId('setup-password-confirm').fill(PASSWORD);
    await shot('01-setup');
    await byTestId('setup-submit').click();
    await byTestId('nav-collections').waitFor();
    expect(new URL(w.page.url()).search).toBe(''); // the one-time token left the address bar
    expect(await byTestId('account-email').textContent()).toBe(EMAIL);
  });
});

describe.skipIf(!hasChromium)('admin UI in a browser', () => {
  const ui = useUi();
  const w = useWalk(ui);
  const byTestId = (id: string) => ui.byTestId(id);
  const url = (path: string) => ui.url(path);
  const shot = (name: string) => w.page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const answerWith = (status: number) =>
    ui.receiver.setHandler((_req, res) => {
      res.statusCode = status;
      res.setHeader('Content-Type', 'text/plain');
      res.end(status === 200 ? 'ok' : `receiver says ${status}`);
    });

  /** How far the page is wider than the screen, and the first elements that stick out. */
  const horizontalOverflow = () => ui.overflow();

  async function login(): Promise<void> {
    await byTestId('login-email').fill(EMAIL);
    await byTestId('login-password').fill(PASSWORD);
    await byTestId('login-submit').click();
  }

  /** The admin API as the harness's admin: `path` under /admin/v1. */
  const adminApi = (method: string, path: string, body?: unknown) => ui.admin(method, `/admin/v1${path}`, body);

  /** A collection of the test's own, with the walk's fields: title (required), priority. */
  const issues = async (): Promise<string> => {
    const name = unique('issues');
    await ui.collection(name, [{ name: 'title', type: 'text', required: true }, { name: 'priority', type: 'integer' }]);
    return name;
  };

  /** A target at the receiver, made through the admin API; its id. */
  const target = async (body: Record<string, unknown>): Promise<string> => {
    const res = await adminApi('POST', '/webhooks', { url: ui.receiver.url, ...body });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    return res.json.id as string;
  };

  /** The target's jobs, newest first, as [state, topic]. */
  const jobs = async (webhookId: string): Promise<{ id: string; state: string; topic: string }[]> =>
    (await adminApi('GET', `/deliveries?webhookId=${encodeURIComponent(webhookId)}`)).json.items;

  /** Waits until the target's jobs are in these states, newest first. */
  const settled = (webhookId: string, states: string[]) =>
    expect.poll(async () => (await jobs(webhookId)).map((j) => j.state), { timeout: 25_000 }).toEqual(states);

  /** The public API with a token of the test's own. */
  const publicApi = async (token: string, method: string, path: string, body?: unknown) => ui.api(token, method, path, body);

  /** A collection, a target of its record events and a token of the test's own; one record, its creation delivered. */
  const deliveredRecord = async () => {
    const collection = await issues();
    const webhookId = await target({ name: unique('Receiver'), topics: ['record.created', 'record.updated'], collections: [collection] });
    const token = await ui.token();
    const created = await publicApi(token, 'POST', `/collections/${collection}/records`, { data: { title: 'First', priority: 1 } });
    expect(created.status).toBe(201);
    await settled(webhookId, ['delivered']);
    return { collection, webhookId, token, recordId: created.json.id as string };
  };

  it('logs out and back in', async () => {
    await ui.goto('#/collections');
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
    await w.page.reload();
    await byTestId('account-email').waitFor();
    expect(w.page.url()).toContain('#/collections');
  });

  it('creates a collection with a dynamic field list', async () => {
    const name = unique('issues');
    await ui.goto('#/collections');
    await byTestId('collection-name').fill(name);
    await byTestId('cf-name-0').fill('title');
    await byTestId('cf-required-0').check();
    await byTestId('cf-add-field').click();
    await byTestId('cf-name-1').fill('priority');
    await byTestId('cf-type-1').selectOption('integer');
    await shot('03-collections-new');
    await byTestId('collection-submit').click();
    await w.page.waitForURL(new RegExp(`#/collections/${name}$`));
    await poll(() => byTestId('field-row').count()).toBe(2);
    // Add a field to the existing collection (PATCH with the whole new field list).
    await byTestId('nf-add-field').click();
    await byTestId('nf-name-0').fill('done');
    await byTestId('nf-type-0').selectOption('boolean');
    await byTestId('schema-submit').click();
    await byTestId('schema-saved').waitFor();
    await poll(() => byTestId('field-row').count()).toBe(3);
    // A duplicate name is refused by the server; the banner quotes the request id.
    await w.page.goto(url('/admin/#/collections'));
    await byTestId('collection-row').first().waitFor();
    await byTestId('collection-name').fill(name);
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
    const collection = await issues();
    const name = unique('ci');
    await ui.goto('#/collections');
    await byTestId('nav-tokens').click();
    await byTestId('token-name').fill(name);
    await byTestId('token-collections').fill(collection);
    await byTestId('token-submit').click();
    const value = byTestId('token-value');
    await value.waitFor();
    const apiToken = await value.inputValue();
    expect(apiToken).toMatch(/^svc_pat_/);
    expect(await byTestId('secret-warning').textContent()).toMatch(/only once/i);
    await byTestId('copy-token').click();
    await poll(() => byTestId('copy-status').textContent()).not.toBe('');
    await poll(() => byTestId('token-row').filter({ hasText: name }).count()).toBe(1);
    expect(await byTestId('token-row').filter({ hasText: name }).textContent()).toContain(collection);
    await shot('05-tokens-created');
    await w.page.reload();
    await byTestId('token-row').first().waitFor();
    expect(await value.count()).toBe(0);
    expect(await w.page.content()).not.toContain(apiToken);
  });

  it("offers exactly the server's token scopes, read from the admin API: a token of events:read alone reads the feed", async () => {
    const { SCOPES } = (await import('../../server/src/auth/api-tokens-store.js')) as { SCOPES: readonly string[] };
    const collection = await issues();
    await ui.goto('#/tokens');
    const boxes = byTestId('token-scopes').locator('input[type=checkbox]');
    await poll(() => boxes.count()).toBe(SCOPES.length);
    const offered = await boxes.evaluateAll((els) => els.map((el) => (el as HTMLInputElement).value));
    expect([...offered].sort()).toEqual([...SCOPES].sort());
    await byTestId('token-name').fill(unique('feed_reader'));
    for (const scope of SCOPES) if (scope !== 'events:read') await byTestId(`token-scope-${scope.replace(':', '-')}`).uncheck();
    await shot('05b-token-scopes');
    await byTestId('token-submit').click();
    const value = byTestId('token-value');
    await value.waitFor();
    const feedToken = await value.inputValue();
    const feed = await fetch(url('/api/v1/events?limit=1'), { headers: { Authorization: `Bearer ${feedToken}` } });
    expect(feed.status).toBe(200);
    const records = await fetch(url(`/api/v1/collections/${collection}/records`), { headers: { Authorization: `Bearer ${feedToken}` } });
    expect(records.status).toBe(403);
  });

  it('refuses a private destination inline, then creates a webhook and shows its secret once', async () => {
    await ui.goto('#/collections');
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

    await byTestId('webhook-url').fill(ui.receiver.url);
    await byTestId('webhook-submit').click();
    const secret = byTestId('webhook-secret');
    await secret.waitFor();
    expect(await secret.inputValue()).toMatch(/^whsec_/);
    expect(await byTestId('webhook-secret-panel').textContent()).toMatch(/never be shown again/i);
    await byTestId('copy-secret').click();
    await poll(() => byTestId('copy-status').textContent()).not.toBe('');
    const webhookId = decodeURIComponent(w.page.url().split('#/webhooks/')[1] ?? '');
    expect(webhookId).toMatch(/^wh_/);
    expect(await byTestId('webhook-topics').inputValue()).toBe('record.created, record.updated');
    await shot('07-webhook-created');
    await w.page.reload();
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
      await w.page.reload();
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
    const collection = await issues();
    const webhookId = await target({ name: unique('Receiver'), topics: ['record.created'], collections: [collection] });
    const token = await ui.token();
    const created = await publicApi(token, 'POST', `/collections/${collection}/records`, { data: { title: 'First', priority: 1 } });
    expect(created.status).toBe(201);
    await w.page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
    const row = byTestId('delivery-row').first();
    await row.waitFor({ timeout: 15_000 });
    // No reload: the list refreshes itself while a job is pending or delivering.
    await expect.poll(() => row.getByTestId('delivery-state').textContent(), { timeout: 20_000 }).toBe('delivered');
    const [job] = await jobs(webhookId);
    expect(ui.receiver.requests.filter((r) => r.headers['svc-delivery'] === job!.id).map((r) => JSON.parse(r.body).recordId)).toEqual([created.json.id]);
    await shot('08-deliveries-delivered');

    await w.page.goto(url(`/admin/#/collections/${collection}`));
    await poll(() => byTestId('record-row').count()).toBe(1);
    await shot('09-collection-records');
  });

  it('shows a failing delivery going dead, and retries it to delivered', async () => {
    const { collection, webhookId, token, recordId } = await deliveredRecord();
    answerWith(500);
    const updated = await publicApi(token, 'PATCH', `/collections/${collection}/records/${recordId}`, { data: { title: 'Second' } });
    expect(updated.status).toBe(200);
    await w.page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
    await byTestId('delivery-row').first().waitFor({ timeout: 15_000 });
    const deadRow = w.page.locator('[data-testid="delivery-row"][data-state="dead"]');
    await deadRow.first().waitFor({ timeout: 25_000 });
    await shot('10-deliveries-dead');

    await deadRow.first().getByTestId('delivery-link').click();
    await poll(() => byTestId('delivery-state').textContent()).toBe('dead');
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
    await w.page.goto(url(`/admin/#/deliveries?state=dead&webhookId=${encodeURIComponent(webhookId)}`));
    await byTestId('deliveries-table-empty').waitFor();
  });

  it("shows a target's health, recovers its dead jobs, and each attempt's connection", async () => {
    // A history: delivered at once; then two failed attempts (dead) and the retry that delivered.
    const { collection, webhookId, token, recordId } = await deliveredRecord();
    answerWith(500);
    expect((await publicApi(token, 'PATCH', `/collections/${collection}/records/${recordId}`, { data: { title: 'Second' } })).status).toBe(200);
    await settled(webhookId, ['dead', 'delivered']);
    answerWith(200);
    const [dead] = await jobs(webhookId);
    expect((await adminApi('POST', `/deliveries/${dead!.id}/retry`)).status).toBe(200);
    await settled(webhookId, ['delivered', 'delivered']);

    await w.page.goto(url(`/admin/#/webhooks/${encodeURIComponent(webhookId)}`));
    await byTestId('health-chart').waitFor();
    await poll(() => byTestId('health-attempts').textContent()).toBe('2 ok · 2 failed');
    expect(await byTestId('health-success-rate').textContent()).toBe('50 %');
    expect(await byTestId('health-p50').textContent()).toMatch(/^\d+ ms$/);
    const bars = await byTestId('health-bar').evaluateAll((els) => els.map((e) => [Number(e.getAttribute('data-succeeded')), Number(e.getAttribute('data-failed'))]));
    expect(bars.length).toBeGreaterThanOrEqual(24);
    expect(bars.reduce((sum, [ok, failed]) => [sum[0]! + ok!, sum[1]! + failed!], [0, 0])).toEqual([2, 2]);
    expect(await w.page.locator('[data-testid="health-chart"] rect.chart-failed').count()).toBeGreaterThan(0);
    await shot('17-webhook-health');

    // The job page names the address dialled and the phases' timings.
    await w.page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
    await byTestId('delivery-link').first().click();
    await byTestId('attempt-row').first().waitFor();
    expect(await byTestId('attempt-remote-address').first().textContent()).toBe('127.0.0.1');
    expect(await byTestId('attempt-timings').first().textContent()).toMatch(/first byte \d+ ms/);
    await shot('18-delivery-diagnostics');

    // A job goes dead; recover sends it back, and it is delivered.
    answerWith(500);
    expect((await publicApi(token, 'PATCH', `/collections/${collection}/records/${recordId}`, { data: { title: 'Third' } })).status).toBe(200);
    const deadRows = w.page.locator('[data-testid="delivery-row"][data-state="dead"]');
    try {
      // The list refreshes itself while a job is unfinished.
      await w.page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
      await deadRows.first().waitFor({ timeout: 25_000 });
    } finally {
      answerWith(200);
    }
    await w.page.goto(url(`/admin/#/webhooks/${encodeURIComponent(webhookId)}`));
    await byTestId('recover-jobs').click();
    await poll(() => byTestId('recover-result').textContent()).toBe('1 dead job sent back for another round.');
    await byTestId('replay-events').click();
    await poll(() => byTestId('replay-result').textContent()).toBe('0 jobs created for missed events.');
    await w.page.goto(url(`/admin/#/deliveries?webhookId=${encodeURIComponent(webhookId)}`));
    await byTestId('delivery-row').first().waitFor();
    await expect.poll(() => deadRows.count(), { timeout: 20_000 }).toBe(0);

    await w.page.goto(url('/admin/#/webhooks'));
    await byTestId('health-overview').click();
    const healthRow = w.page.locator(`[data-testid="health-row"][data-id="${webhookId}"]`);
    await poll(() => healthRow.count()).toBe(1);
    expect(await healthRow.getByTestId('health-rate').textContent()).toMatch(/^\d+(\.\d)? %$/);
    await shot('19-health-overview');

    await w.page.setViewportSize({ width: 390, height: 844 });
    try {
      await w.page.goto(url(`/admin/#/webhooks/${encodeURIComponent(webhookId)}`));
      await byTestId('health-chart').waitFor();
      await byTestId('health-attempts').waitFor();
      await shot('20-phone-webhook-health');
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
      await w.page.goto(url('/admin/#/health'));
      await byTestId('health-row').first().waitFor();
      await shot('21-phone-health-overview');
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
    } finally {
      await w.page.setViewportSize({ width: 1366, height: 860 });
    }
  });

  it('shows events live, catches up after a pause, and filters by topic', async () => {
    const collection = await issues();
    const token = await ui.token();
    await ui.goto('#/events');
    await poll(() => byTestId('events-status').textContent()).toBe('live');
    const rowFor = (id: string) => w.page.locator(`[data-testid=event-row]:has-text("${id}")`);
    const first = await publicApi(token, 'POST', `/collections/${collection}/records`, { data: { title: 'Live one', priority: 2 } });
    expect(first.status).toBe(201);
    await poll(() => rowFor(first.json.id).count()).toBe(1);

    await byTestId('events-pause').click();
    expect(await byTestId('events-status').textContent()).toBe('paused');
    const second = await publicApi(token, 'POST', `/collections/${collection}/records`, { data: { title: 'While paused', priority: 3 } });
    expect(second.status).toBe(201);
    expect(await rowFor(second.json.id).count()).toBe(0);
    await byTestId('events-pause').click();
    await poll(() => rowFor(second.json.id).count()).toBe(1);
    expect(await rowFor(first.json.id).count()).toBe(1);

    await byTestId('events-topic').selectOption('record.updated');
    await byTestId('events-apply').click();
    await poll(() => byTestId('event-row').count()).toBe(0);
    await poll(() => byTestId('events-status').textContent()).toBe('live');
    const created = await publicApi(token, 'POST', `/collections/${collection}/records`, { data: { title: 'Not shown', priority: 4 } });
    const updated = await publicApi(token, 'PATCH', `/collections/${collection}/records/${first.json.id}`, { data: { title: 'Live one, edited' } });
    expect(updated.status).toBe(200);
    await poll(() => byTestId('event-row').count()).toBe(1);
    expect(await rowFor(created.json.id).count()).toBe(0);
    expect(await byTestId('event-row').first().textContent()).toContain('record.updated');
    await shot('events');
  });

  it('renders a hostile webhook name as text', async () => {
    await ui.goto('#/webhooks/new');
    await byTestId('webhook-name').fill(XSS_NAME);
    await byTestId('webhook-url').fill(ui.receiver.url);
    await byTestId('webhook-topics').fill('webhook.test');
    await byTestId('webhook-enabled').uncheck();
    await byTestId('webhook-submit').click();
    await byTestId('webhook-secret').waitFor();
    await poll(() => byTestId('webhook-title').textContent()).toContain(XSS_NAME);
    const id = decodeURIComponent(w.page.url().split('#/webhooks/')[1] ?? '');
    await w.page.goto(url('/admin/#/webhooks'));
    const xssRow = w.page.locator(`[data-testid="webhook-row"][data-id="${id}"]`);
    await poll(() => xssRow.count()).toBe(1);
    expect(await xssRow.getByTestId('webhook-link').textContent()).toBe(XSS_NAME);
    expect(await xssRow.getByTestId('webhook-state').textContent()).toBe('disabled');
    expect(await w.page.locator('main img').count()).toBe(0);
    expect(await w.page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).toBeUndefined();
    await shot('13-webhooks');

    // Enable from the list, then send a test event to the real receiver's URL from the target page.
    await xssRow.getByTestId('toggle-webhook').click();
    await poll(() => xssRow.getByTestId('webhook-state').textContent()).toBe('enabled');
    await xssRow.getByTestId('webhook-link').click();
    await byTestId('send-test').click();
    await byTestId('test-delivery-link').click();
    await expect.poll(() => byTestId('delivery-state').textContent(), { timeout: 20_000 }).toBe('delivered');
    expect(await byTestId('delivery-envelope').textContent()).toContain('"topic": "webhook.test"');
    expect(await w.page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).toBeUndefined();
  });

  it('rotates a secret and deletes a webhook through the confirm dialog', async () => {
    const name = unique('Rotated then deleted');
    const id = await target({ name, topics: ['webhook.test'] });
    const row = () => w.page.locator(`[data-testid="webhook-row"][data-id="${id}"]`);
    await ui.goto('#/webhooks');
    await row().getByTestId('webhook-link').click();
    await byTestId('rotate-secret').click();
    await byTestId('confirm-dialog').waitFor();
    await byTestId('rotate-overlap').fill('60');
    await byTestId('confirm-ok').click();
    expect(await byTestId('webhook-secret').inputValue()).toMatch(/^whsec_/);

    await byTestId('delete-webhook').click();
    await byTestId('confirm-dialog').waitFor();
    expect(await byTestId('confirm-message').textContent()).toContain(name);
    await shot('14-confirm-delete');
    await byTestId('confirm-cancel').click();
    expect(await byTestId('confirm-dialog').count()).toBe(0);
    expect(w.page.url()).toContain(`#/webhooks/${id}`);

    await byTestId('delete-webhook').click();
    await byTestId('confirm-ok').click();
    await w.page.waitForURL(/#\/webhooks$/);
    await byTestId('webhooks-table').or(byTestId('webhooks-table-empty')).waitFor();
    expect(await row().count()).toBe(0);
    expect((await adminApi('GET', `/webhooks/${id}`)).status).toBe(404);
  });

  it('sends an expired session back to login and keeps the half-filled form', async () => {
    await ui.goto('#/webhooks/new');
    await byTestId('webhook-name').fill('Half filled');
    await byTestId('webhook-url').fill('https://hooks.example.com/svc');
    await w.context.clearCookies(); // the session cookie is gone, as after expiry
    await byTestId('webhook-submit').click();
    await byTestId('login-form').waitFor();
    expect(await byTestId('login-message').textContent()).toMatch(/session/i);
    await login();
    await w.page.waitForURL(/#\/webhooks\/new$/);
    expect(await byTestId('webhook-name').inputValue()).toBe('Half filled');
    expect(await byTestId('webhook-url').inputValue()).toBe('https://hooks.example.com/svc');
  });

  it('is usable at phone width', async () => {
    // A target and a job of its own, so both lists have rows.
    const id = await target({ name: unique('Phone'), topics: ['webhook.test'] });
    expect((await adminApi('POST', `/webhooks/${id}/test`)).status).toBe(202);
    await w.page.setViewportSize({ width: 390, height: 844 });
    await w.page.goto(url('/admin/#/webhooks'));
    await byTestId('webhook-row').first().waitFor();
    await shot('15-phone-webhooks');
    await w.page.goto(url(`/admin/#/deliveries`));
    await byTestId('delivery-row').first().waitFor();
    await shot('16-phone-deliveries');
    // Nothing wider than the screen: tables reflow instead of overflowing the page.
    expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
  });

  it('filters, sorts and counts the records of a collection, and pages without losing the query', async () => {
    const tasks = unique('tasks');
    const fields = [
      { name: 'title', type: 'text', required: true },
      { name: 'priority', type: 'integer', required: false },
      { name: 'status', type: 'text', required: false },
      { name: 'meta', type: 'json', required: false },
    ];
    expect((await adminApi('POST', '/collections', { name: tasks, fields })).status).toBe(201);
    const token = await adminApi('POST', '/tokens', { name: `${tasks} writer`, scopes: ['records:write', 'records:read'], collections: [tasks] });
    expect(token.status).toBe(201);
    for (let i = 0; i < 30; i += 1) {
      const res = await fetch(url(`/api/v1/collections/${tasks}/records`), {
        method: 'POST',
        headers: { Authorization: `Bearer ${token.json.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ data: { title: `Task ${String(i).padStart(2, '0')}`, priority: i % 7, status: i < 26 ? 'open' : 'done', meta: { i } } }),
      });
      expect(res.status).toBe(201);
    }

    await ui.goto(`#/collections/${tasks}`);
    await poll(() => byTestId('records-count').textContent()).toBe('30 records');
    expect(await byTestId('record-row').count()).toBe(20);
    // json fields do not sort: their header has no button.
    expect(await w.page.locator('[data-testid="records-header"][data-key=""]').textContent()).toBe('meta');
    expect(await byTestId('sort-meta').count()).toBe(0);

    // Filter to a subset; the count says how many match on all pages together.
    await byTestId('records-filter').fill("status = 'open'");
    await byTestId('records-filter-apply').click();
    await poll(() => byTestId('records-count').textContent()).toBe('26 matching');
    const column = (name: string) => w.page.locator(`[data-testid="record-row"] td[data-label="${name}"]`).allTextContents();
    expect(new Set(await column('status'))).toEqual(new Set(['open']));

    // Sort by priority: ascending, then descending, shown with an arrow and aria-sort.
    const priorityHeader = w.page.locator('[data-testid="records-header"][data-key="priority"]');
    await byTestId('sort-priority').click();
    await poll(() => priorityHeader.getAttribute('aria-sort')).toBe('ascending');
    const ascending = (await column('priority')).map(Number);
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
    expect(ascending[0]).toBe(0);
    expect(await byTestId('sort-priority').textContent()).toContain('↑');
    await byTestId('sort-priority').click();
    await poll(() => priorityHeader.getAttribute('aria-sort')).toBe('descending');
    const descending = (await column('priority')).map(Number);
    expect(descending).toEqual([...descending].sort((a, b) => b - a));
    expect(descending[0]).toBe(6);
    expect(await byTestId('sort-priority').textContent()).toContain('↓');
    expect(await byTestId('records-count').textContent()).toBe('26 matching');
    await w.page.evaluate(() => window.scrollTo(0, 0));
    await shot('22-records-filtered-sorted');

    // Page 2 keeps the filter and the sort: the 6 remaining open records, continuing the descending order.
    const firstPageIds = await byTestId('record-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
    const listRequests: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (r.url().includes(`/collections/${tasks}/records?`)) listRequests.push(r.url());
    };
    w.page.on('request', onRequest);
    await byTestId('records-pager-next').click();
    await poll(() => byTestId('records-pager-info').textContent()).toBe('Page 2 · 6 shown');
    // The count stays the query's; page 2 does not ask for it again (counting reads every match).
    expect(await byTestId('records-count').textContent()).toBe('26 matching');
    expect(listRequests).toHaveLength(1);
    expect(new URL(listRequests[0]!).searchParams.get('count')).toBeNull();
    w.page.off('request', onRequest);
    expect(new Set(await column('status'))).toEqual(new Set(['open']));
    const secondPage = (await column('priority')).map(Number);
    expect(secondPage).toEqual([...secondPage].sort((a, b) => b - a));
    expect(secondPage[0]).toBeLessThanOrEqual(descending[descending.length - 1]!);
    const secondPageIds = await byTestId('record-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
    expect(secondPageIds.filter((id) => firstPageIds.includes(id))).toEqual([]);
    expect(await byTestId('filter-error').isHidden()).toBe(true);

    // The query is in the address: a reload shows the same filtered, sorted list from its first page.
    await w.page.reload();
    await poll(() => byTestId('records-count').textContent()).toBe('26 matching');
    expect(await byTestId('records-filter').inputValue()).toBe("status = 'open'");
    expect(await priorityHeader.getAttribute('aria-sort')).toBe('descending');
    expect(await byTestId('record-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')))).toEqual(firstPageIds);
    // Saving the field form redraws the page's cards; the query in force (changed since the page opened) survives it.
    const titleHeader = w.page.locator('[data-testid="records-header"][data-key="title"]');
    await byTestId('sort-title').click();
    await poll(() => titleHeader.getAttribute('aria-sort')).toBe('ascending');
    await byTestId('nf-add-field').click();
    await byTestId('nf-name-0').fill('due');
    await byTestId('nf-type-0').selectOption('datetime');
    await byTestId('schema-submit').click();
    await byTestId('schema-saved').waitFor();
    await poll(() => byTestId('sort-due').count()).toBe(1);
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
    await w.page.evaluate(() => window.scrollTo(0, 0));
    await shot('23-records-bad-filter');

    // At phone width the header is hidden, so the sort is a select; nothing sticks out, the caret line included.
    await w.page.setViewportSize({ width: 390, height: 844 });
    try {
      await byTestId('records-filter').fill("title ~ 'task 0'");
      await byTestId('records-filter-apply').click();
      await poll(() => byTestId('records-count').textContent()).toBe('10 matching');
      expect(await byTestId('records-sort').inputValue()).toBe('title');
      await byTestId('records-sort').selectOption('-title');
      await poll(() => column('title')).toEqual(Array.from({ length: 10 }, (_, i) => `Task 0${9 - i}`));
      expect(new URL(w.page.url()).hash).toContain('sort=-title');
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
      await w.page.evaluate(() => window.scrollTo(0, 0));
      await shot('25-phone-records');
      await byTestId('records-filter').fill("title = 'a very long text that goes on and on' && nonexistent_field_name = 1");
      await byTestId('records-filter-apply').click();
      await byTestId('filter-error-caret').waitFor();
      expect(await byTestId('filter-error-position').textContent()).toBe(' (at position 50)');
      // The echo scrolls to the caret, which sits past the phone's width.
      expect(await byTestId('filter-error-caret').evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
      await w.page.evaluate(() => window.scrollTo(0, 0));
      await shot('26-phone-records-bad-filter');
    } finally {
      await w.page.setViewportSize({ width: 1366, height: 860 });
    }

    await byTestId('records-filter-clear').click();
    await poll(() => byTestId('records-count').textContent()).toBe('30 records');
    expect(await byTestId('filter-error').isHidden()).toBe(true);
  });

  it('switches a field indexed on and off', async () => {
    const tasks = unique('tasks');
    await ui.collection(tasks, [
      { name: 'title', type: 'text', required: true },
      { name: 'priority', type: 'integer' },
      { name: 'status', type: 'text' },
      { name: 'meta', type: 'json' },
      { name: 'due', type: 'datetime' },
    ]);
    const indexedIn = async () => {
      const schema = await adminApi('GET', '/api/schema');
      const own = schema.json.collections.find((c: { name: string }) => c.name === tasks);
      return Object.fromEntries(own.fields.map((f: { name: string; indexed: boolean }) => [f.name, f.indexed]));
    };
    await ui.goto(`#/collections/${tasks}`);
    const toggle = w.page.locator('[data-testid^="field-indexed-"][data-field="priority"]');
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);
    expect(await w.page.locator('[data-testid^="field-indexed-"][data-field="meta"]').isDisabled()).toBe(true);
    const status = byTestId(`field-indexed-status-${await toggle.getAttribute('id').then((id) => id!.split('-').pop())}`);
    expect(await status.textContent()).toBe('not indexed');

    await toggle.check();
    await poll(() => status.textContent()).toBe('indexed');
    expect(await toggle.isEnabled()).toBe(true);
    expect(await indexedIn()).toEqual({ title: false, priority: true, status: false, meta: false, due: false });
    await w.page.evaluate(() => window.scrollTo(0, 0));
    await shot('24-collection-indexed');
    // The page shows the saved state after a reload too.
    await w.page.reload();
    await poll(() => toggle.isChecked()).toBe(true);

    await toggle.uncheck();
    await poll(() => status.textContent()).toBe('not indexed');
    expect(await indexedIn()).toEqual({ title: false, priority: false, status: false, meta: false, due: false });
    await w.page.reload();
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);

    // A 17th index is refused: the switch goes back, and the banner gives the server's reason.
    const wide = Array.from({ length: 17 }, (_, i) => ({ name: `f${i}`, type: 'integer', required: false, indexed: i < 16 }));
    const wideName = unique('wide');
    expect((await adminApi('POST', '/collections', { name: wideName, fields: wide })).status).toBe(201);
    await w.page.goto(url(`/admin/#/collections/${wideName}`));
    await byTestId('field-indexed-16').waitFor();
    expect(await byTestId('field-indexed-15').isChecked()).toBe(true);
    await byTestId('field-indexed-16').click(); // not check(): the refusal unchecks it again at once
    await byTestId('error-banner').waitFor();
    await poll(() => byTestId('field-indexed-status-16').textContent()).toBe('not indexed');
    expect(await byTestId('field-indexed-16').isChecked()).toBe(false);
    expect(await byTestId('error-banner').textContent()).toContain('at most 16 indexed fields');
    await w.page.evaluate(() => window.scrollTo(0, 0));
    await shot('27-collection-indexed-refused');
    expect((await adminApi('GET', `/collections/${wideName}`)).json.fields.filter((f: { indexed: boolean }) => f.indexed)).toHaveLength(16);

    // A new collection's fields can be indexed from the start (not json ones).
    const notes = unique('notes');
    await w.page.goto(url('/admin/#/collections'));
    await byTestId('collection-row').first().waitFor();
    await byTestId('collection-name').fill(notes);
    await byTestId('cf-name-0').fill('slug');
    await byTestId('cf-indexed-0').check();
    await byTestId('cf-add-field').click();
    await byTestId('cf-name-1').fill('body');
    await byTestId('cf-indexed-1').check();
    await byTestId('cf-type-1').selectOption('json');
    expect(await byTestId('cf-indexed-1').isDisabled()).toBe(true);
    expect(await byTestId('cf-indexed-1').isChecked()).toBe(false);
    await byTestId('collection-submit').click();
    await w.page.waitForURL(new RegExp(`#/collections/${notes}$`));
    expect((await adminApi('GET', `/collections/${notes}`)).json.fields).toEqual([
      { name: 'slug', type: 'text', required: false, indexed: true },
      { name: 'body', type: 'json', required: false, indexed: false },
    ]);
    await poll(() => byTestId('field-indexed-status-0').textContent()).toBe('indexed');
  });

  it("sets a target's receiver: scheme, algorithm, headers retyped to change, rate limit; the ed25519 key signs a real delivery", async () => {
    await ui.goto('#/webhooks/new');
    await byTestId('webhook-name').fill('Standard receiver');
    await byTestId('webhook-url').fill(ui.receiver.url);
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
    const id = decodeURIComponent(w.page.url().split('#/webhooks/')[1] ?? '');
    await byTestId('receiver-facts').waitFor();
    expect(await byTestId('webhook-public-key').inputValue()).toBe(publicKey);
    await byTestId('copy-public-key').click();
    await poll(() => byTestId('copy-public-key-status').textContent()).not.toBe('');
    expect(await byTestId('receiver-scheme').textContent()).toContain('Standard Webhooks');
    expect(await byTestId('receiver-algorithm').textContent()).toBe('Ed25519');
    expect(await byTestId('receiver-header').allTextContents()).toEqual(['X-Api-Key: …5678', 'X-Tenant: …corp']);
    expect(await byTestId('receiver-rate-limit').textContent()).toBe('5 attempts per second');
    expect(await w.page.content()).not.toContain('key-12345678');
    await shot('29-webhook-ed25519');

    // The receiver gets the headers typed and a v1a signature that the public key verifies.
    await byTestId('send-test').click();
    const deliveryId = await byTestId('test-delivery-link').textContent();
    await expect.poll(() => ui.receiver.requests.filter((r) => r.headers['webhook-id'] === deliveryId).length, { timeout: 20_000 }).toBe(1);
    const got = ui.receiver.requests.find((r) => r.headers['webhook-id'] === deliveryId)!;
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
      const sent = w.page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/webhooks/${id}`));
      await save();
      const body = (await sent).postDataJSON() as Record<string, unknown>;
      await w.page.locator('[data-testid="webhook-form"]:not([data-before-save])').waitFor();
      return body;
    };
    await w.page.reload();
    await byTestId('header-name-1').waitFor();
    expect(await byTestId('header-value-0').inputValue()).toBe('');
    expect(await byTestId('header-value-0').getAttribute('placeholder')).toBe('…5678');
    await byTestId('webhook-rate-limit').fill('');
    const untouched = await patchBody(() => byTestId('webhook-submit').click());
    expect(untouched).not.toHaveProperty('headers');
    expect(untouched.rateLimit).toBeNull();
    await poll(() => byTestId('receiver-rate-limit').textContent()).toBe('No limit');

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
    await poll(() => byTestId('receiver-header').allTextContents()).toEqual(['X-Api-Key: …efgh']);
    await byTestId('header-remove-0').click();
    expect((await patchBody(() => byTestId('webhook-submit').click())).headers).toBeNull();
    await byTestId('receiver-headers-none').waitFor();

    // Back to svc: the algorithm follows to HMAC, and the answer shows the new secret once.
    await byTestId('webhook-scheme').selectOption('svc');
    expect(await patchBody(() => byTestId('webhook-submit').click())).toMatchObject({ signatureScheme: 'svc', signatureAlgorithm: 'hmac-sha256' });
    expect(await byTestId('webhook-secret').inputValue()).toMatch(/^whsec_/);
    await poll(() => byTestId('receiver-algorithm').textContent()).toBe('HMAC-SHA256');
    expect(await byTestId('webhook-public-key').count()).toBe(0);

    // A secret made before SPEC §13 (not standard base64) must be rotated first: the 409 shows by the scheme.
    const oldSecret = `whsec_${randomBytes(24).toString('base64url').replace(/^./, '-')}`;
    await w.srv.ctx.database.db.updateTable('webhooks').set({ secret_sealed: w.srv.ctx.box.seal(oldSecret, id) }).where('id', '=', id).execute();
    await w.page.reload();
    await byTestId('webhook-scheme').selectOption('standard');
    await byTestId('webhook-submit').click();
    await byTestId('error-signatureScheme').waitFor();
    expect(await byTestId('error-signatureScheme').textContent()).toMatch(/rotate/i);
    expect((await adminApi('GET', `/webhooks/${id}`)).json.signatureScheme).toBe('svc');

    await w.page.setViewportSize({ width: 390, height: 844 });
    try {
      await addHeader(0, 'X-Long', 'v'.repeat(300));
      expect(await horizontalOverflow()).toEqual({ by: 0, wide: [] });
      await shot('30-phone-webhook-receiver');
    } finally {
      await w.page.setViewportSize({ width: 1366, height: 860 });
    }
    expect((await adminApi('DELETE', `/webhooks/${id}`)).status).toBe(204);
  });
});
