/**
 * Issue 24 item 6 in a real browser: a wrong password titled plainly, the favicon link, the records filter's example
 * written with the collection's own fields, the webhook form's topics and collections picked from the server's
 * lists, the token form's events:read, and the API schema page's operations whose curl commands really run.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EMAIL, PASSWORD, hasChromium, useUi } from './harness.js';
import { expectClean, provoked } from './ui-checks.js';

const run = promisify(execFile);

describe.skipIf(!hasChromium)('admin UI: small things (issue 24 item 6)', () => {
  const ui = useUi();



  it('titles a wrong password plainly, then logs in', async () => {
    // Only the browser forgets its session: the harness keeps using its own.
    await ui.context.clearCookies();
    await ui.page.goto(ui.url('/admin/#/collections'));
    await ui.byTestId('login-form').waitFor();
    await ui.byTestId('login-email').fill(EMAIL);
    await ui.byTestId('login-password').fill('not the password at all');
    await ui.byTestId('login-submit').click();
    const banner = ui.byTestId('error-banner');
    await banner.waitFor();
    expect(await banner.locator('.banner-title').textContent()).toBe('Wrong email or password');
    expect(await banner.textContent()).not.toContain('Authentication required');
    await ui.screenshots('login-wrong-password');
    await expectClean(ui);

    await ui.byTestId('login-password').fill(PASSWORD);
    await ui.byTestId('login-submit').click();
    await ui.byTestId('account-email').waitFor();
    expect(ui.page.url()).toContain('#/collections');
    // The session check at start and the wrong password.
    expect(provoked(ui, 401)).toBe(2);
    expect(ui.problems).toEqual([]);
  });

  it('links the favicon the server answers at /admin/favicon.ico', async () => {
    await ui.goto('#/collections');
    expect(await ui.page.locator('link[rel="icon"]').getAttribute('href')).toBe('/admin/favicon.ico');
    const icon = await fetch(ui.url('/admin/favicon.ico'));
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\//);
  });

  it("writes the records filter's example with the collection's own fields", async () => {
    await ui.collection('st_tickets', [{ name: 'subject', type: 'text' }, { name: 'severity', type: 'integer' }, { name: 'open', type: 'boolean' }]);
    await ui.collection('st_flags', [{ name: 'on', type: 'boolean' }]);
    await ui.collection('st_bare', []);
    const placeholder = async (name: string) => {
      await ui.goto(`#/collections/${name}`);
      return ui.byTestId('records-filter').getAttribute('placeholder');
    };
    expect(await placeholder('st_tickets')).toBe("subject ~ 'word' && severity >= 3");
    expect(await placeholder('st_flags')).toBe('on = true');
    expect(await placeholder('st_bare')).toBe("version > 1 && createdAt >= '2026-01-01T00:00:00Z'");

    // The example is a filter the server accepts for that collection.
    await ui.goto('#/collections/st_tickets');
    const example = (await ui.byTestId('records-filter').getAttribute('placeholder'))!;
    await ui.byTestId('records-filter').fill(example);
    await ui.byTestId('records-filter-apply').click();
    await expect.poll(() => ui.byTestId('records-count').textContent()).toBe('0 matching');
    expect(await ui.byTestId('filter-error').isHidden()).toBe(true);
    expect(ui.problems).toEqual([]);
  });

  it("picks a target's topics and collections from the server's lists", async () => {
    await ui.collection('st_orders', [{ name: 'total', type: 'number' }]);
    await ui.collection('st_refunds', [{ name: 'reason', type: 'text' }]);
    const capabilities = await (await fetch(ui.url('/api/v1/capabilities'))).json();
    await ui.goto('#/webhooks/new');
    const topicBoxes = ui.byTestId('webhook-topics-choices').locator('input[type="checkbox"]');
    await expect.poll(() => topicBoxes.count()).toBe(capabilities.topics.length);
    expect(await topicBoxes.evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))).toEqual(capabilities.topics);
    // The default text checks its boxes; a box edits the text; typing moves the boxes.
    expect(await ui.byTestId('webhook-topics-choice-record.created').isChecked()).toBe(true);
    expect(await ui.byTestId('webhook-topics-choice-record.deleted').isChecked()).toBe(false);
    await ui.byTestId('webhook-topics-choice-record.deleted').check();
    await ui.byTestId('webhook-topics-choice-record.created').uncheck();
    expect(await ui.byTestId('webhook-topics').inputValue()).toBe('record.updated, record.deleted');
    await ui.byTestId('webhook-topics').fill('record.updated, webhook.test');
    expect(await ui.byTestId('webhook-topics-choice-webhook.test').isChecked()).toBe(true);
    expect(await ui.byTestId('webhook-topics-choice-record.deleted').isChecked()).toBe(false);

    const collectionBoxes = ui.byTestId('webhook-collections-choices').locator('input[type="checkbox"]');
    await expect.poll(() => collectionBoxes.count()).toBeGreaterThanOrEqual(2);
    const names = await collectionBoxes.evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value));
    expect(names).toEqual(expect.arrayContaining(['st_orders', 'st_refunds']));
    await ui.byTestId('webhook-collections-choice-st_refunds').check();
    await ui.byTestId('webhook-collections-choice-st_orders').check();
    expect(await ui.byTestId('webhook-collections').inputValue()).toBe('st_refunds, st_orders');
    await ui.screenshots('webhook-form-choices');
    await expectClean(ui);

    await ui.byTestId('webhook-name').fill('Picked from lists');
    await ui.byTestId('webhook-url').fill(ui.receiver.url);
    await ui.byTestId('webhook-submit').click();
    await ui.byTestId('webhook-secret').waitFor();
    const id = decodeURIComponent(ui.page.url().split('#/webhooks/')[1] ?? '');
    const saved = await ui.admin('GET', `/admin/v1/webhooks/${id}`);
    expect(saved.json).toMatchObject({ topics: ['record.updated', 'webhook.test'], collections: ['st_refunds', 'st_orders'] });
    // The edit form shows the saved choices checked.
    await ui.page.reload();
    await ui.byTestId('webhook-form').waitFor();
    await expect.poll(() => ui.byTestId('webhook-collections-choice-st_orders').isChecked()).toBe(true);
    expect(await ui.byTestId('webhook-topics-choice-record.created').isChecked()).toBe(false);
    expect(ui.problems).toEqual([]);
  });

  it('offers events:read on the token form', async () => {
    await ui.goto('#/tokens');
    const box = ui.byTestId('token-scope-events-read');
    await box.waitFor();
    await ui.byTestId('token-name').fill('feed reader');
    await ui.byTestId('token-scope-records-read').uncheck();
    await ui.byTestId('token-scope-records-write').uncheck();
    expect(await box.isChecked()).toBe(true);
    await ui.byTestId('token-submit').click();
    const token = await ui.byTestId('token-value').inputValue();
    expect((await fetch(ui.url('/api/v1/events?limit=1'), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(ui.problems).toEqual([]);
  });

  it("previews a collection's API: every record operation of the OpenAPI document, with a curl that runs", async () => {
    await ui.collection('st_notes', [{ name: 'body', type: 'text', required: true }, { name: 'stars', type: 'integer' }]);
    const doc = await (await fetch(ui.url('/api/v1/openapi.json'))).json();
    const expected = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>)
      .filter(([path]) => path.includes('{collection}'))
      .flatMap(([, item]) => Object.values(item).map((op) => op.operationId));
    await ui.goto('#/schema?collection=st_notes');
    const ops = ui.byTestId('schema-operation');
    await expect.poll(() => ops.count()).toBe(expected.length);
    expect(await ops.evaluateAll((els) => els.map((e) => e.getAttribute('data-operation')))).toEqual(expected);
    expect(await ui.byTestId('schema-collection').inputValue()).toBe('st_notes');
    await ui.screenshots('schema-api-preview');
    await expectClean(ui);

    // The commands as shown, run by a shell against this server with a real token.
    const token = await ui.token(['records:read', 'records:write']);
    const shell = async (operationId: string, recordId = '') => {
      const command = (await ui.byTestId(`curl-${operationId}`).textContent())!;
      const { stdout } = await run('bash', ['-c', `${command} -s -w '\\n%{http_code}'`], { env: { ...process.env, SVC_TOKEN: token, RECORD_ID: recordId } });
      const lines = stdout.trimEnd().split('\n');
      const status = Number(lines.pop());
      const body = lines.join('\n');
      return { status, json: body ? JSON.parse(body) : null };
    };
    const created = await shell('createRecord');
    expect(created.status).toBe(201);
    expect(created.json.data).toEqual({ body: 'text', stars: 1 });
    expect((await shell('getRecord', created.json.id)).json.id).toBe(created.json.id);
    // The update names version 1 and sets the value the record has: 200, nothing changed.
    const updated = await shell('updateRecord', created.json.id);
    expect(updated).toMatchObject({ status: 200, json: { version: 1 } });
    const listed = await shell('listRecords');
    expect(listed).toMatchObject({ status: 200, json: { items: [] } });
    expect((await shell('deleteRecord', created.json.id)).status).toBe(204);
    expect((await shell('getRecord', created.json.id)).status).toBe(404);

    // Copy puts the command on the clipboard.
    await ui.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.url('/') });
    await ui.byTestId('copy-curl-listRecords').click();
    await expect.poll(() => ui.byTestId('copy-status-listRecords').textContent()).toBe('Copied');
    expect(await ui.page.evaluate(() => navigator.clipboard.readText())).toBe(await ui.byTestId('curl-listRecords').textContent());
    expect(ui.problems).toEqual([]);
  });
});
