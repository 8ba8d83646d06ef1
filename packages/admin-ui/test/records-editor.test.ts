/**
 * The record editor (issue 24 item 1) in a real browser against a real server: the first record of an empty
 * collection, an input fitted to every field type, the server's validation errors at their fields, edits that send
 * only what changed with If-Match, a version conflict (412) with reload and overwrite, and deletion behind a dialog.
 * Records are read and written through the admin session (GET, POST, PATCH and DELETE under
 * /admin/v1/collections/{name}/records).
 */
import type { Request } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, useUi } from './harness.js';
import { expectClean, provoked } from './ui-checks.js';

describe.skipIf(!hasChromium)('admin UI: the record editor (issue 24 item 1)', () => {
  const ui = useUi();
  let token = '';

  const record = async (collection: string, data: Record<string, unknown>) => {
    token ||= await ui.token();
    const res = await ui.api(token, 'POST', `/collections/${collection}/records`, { data });
    expect(res.status).toBe(201);
    return res.json as { id: string; version: number; data: Record<string, unknown> };
  };
  const stored = async (collection: string, id: string) => {
    token ||= await ui.token();
    return ui.api(token, 'GET', `/collections/${collection}/records/${id}`);
  };
  const patch = async (collection: string, id: string, data: Record<string, unknown>) => {
    const res = await ui.api(token, 'PATCH', `/collections/${collection}/records/${id}`, { data });
    expect(res.status).toBe(200);
  };
  const field = (name: string) => ui.byTestId(`record-field-${name}`);
  const writes = (method: string) => (r: Request) => r.method() === method && r.url().includes('/admin/v1/collections/');

  it('offers the first record of an empty collection and creates it with an input for every field type', async () => {
    await ui.collection('re_types', [
      { name: 'title', type: 'text', required: true }, { name: 'notes', type: 'text' }, { name: 'count', type: 'integer' },
      { name: 'score', type: 'number' }, { name: 'done', type: 'boolean' }, { name: 'active', type: 'boolean', required: true },
      { name: 'due', type: 'datetime' }, { name: 'meta', type: 'json' },
    ]);
    await ui.goto('#/collections/re_types');
    const empty = ui.byTestId('records-table-empty');
    await empty.waitFor();
    expect(await empty.textContent()).not.toContain('public API');
    await ui.screenshots('records-empty');
    await expectClean(ui);
    await ui.byTestId('create-first-record').click();
    await ui.byTestId('record-form').waitFor();
    expect(ui.page.url()).toContain('#/collections/re_types/records/new');

    // Each type its own control.
    const kinds = await ui.page.locator('[data-path^="/data/"]').evaluateAll((els) =>
      els.map((e) => `${e.getAttribute('data-path')} ${e.tagName.toLowerCase()}${e instanceof HTMLInputElement ? `:${e.type}` : ''}`));
    expect(kinds).toEqual(['/data/title textarea', '/data/notes textarea', '/data/count input:number', '/data/score input:number',
      '/data/done select', '/data/active input:checkbox', '/data/due input:datetime-local', '/data/meta textarea']);
    await field('title').fill('First');
    await field('count').fill('3');
    await field('score').fill('2.5');
    await field('done').selectOption('false');
    await field('active').check();
    await field('due').fill('2026-03-04T05:06:07');
    await field('meta').fill('{"tags": ["a", "b"]}');
    await ui.screenshots('record-new');
    await expectClean(ui);
    await ui.byTestId('record-submit').click();
    await expect.poll(() => ui.byTestId('record-notice').textContent()).toBe('Record created (version 1).');
    const id = decodeURIComponent(ui.page.url().split('/records/')[1] ?? '');
    expect(id).toMatch(/^rec_/);
    expect((await stored('re_types', id)).json.data).toEqual({
      title: 'First', count: 3, score: 2.5, done: false, active: true, due: '2026-03-04T05:06:07Z', meta: { tags: ['a', 'b'] },
    });
    expect(await ui.byTestId('record-version').textContent()).toBe('1');
    // The collection now lists it, and its row opens it again.
    await ui.byTestId('record-collection-link').click();
    await ui.byTestId('record-row').locator('td').nth(1).click();
    await ui.byTestId('record-form').waitFor();
    expect(await field('title').inputValue()).toBe('First');
    expect(await field('due').inputValue()).toBe('2026-03-04T05:06:07');
    expect(ui.problems).toEqual([]);
  });

  it("shows the browser's and the server's validation errors at their fields", async () => {
    await ui.collection('re_checks', [{ name: 'rank', type: 'integer', required: true }, { name: 'size', type: 'integer' }, { name: 'meta', type: 'json' }]);
    await ui.goto('#/collections/re_checks/records/new');
    await ui.byTestId('record-form').waitFor();
    // Text that is no JSON never leaves the browser.
    let sent = 0;
    ui.page.on('request', (r) => {
      if (writes('POST')(r)) sent += 1;
    });
    await field('meta').fill('{"open": ');
    await ui.byTestId('record-submit').click();
    await expect.poll(() => ui.byTestId('error-data-meta').textContent()).toMatch(/^is not valid JSON/);
    expect(sent).toBe(0);

    // The server's answer: /data/rank is required, /data/size must be an integer.
    await field('meta').fill('{"open": true}');
    await field('size').fill('1.5');
    await ui.byTestId('record-submit').click();
    await expect.poll(() => ui.byTestId('error-data-size').textContent()).toBe('must be an integer');
    expect(await ui.byTestId('error-data-rank').textContent()).toBe('is required');
    expect(await field('size').getAttribute('aria-invalid')).toBe('true');
    expect(await ui.byTestId('error-data-meta').count()).toBe(0);
    expect(sent).toBe(1);
    await ui.screenshots('record-errors');
    await expectClean(ui);
    expect(provoked(ui, 422)).toBe(1);
    expect(ui.problems).toEqual([]);
  });

  it('edits a record from its row, sending only the changed fields with If-Match', async () => {
    await ui.collection('re_edit', [{ name: 'title', type: 'text', required: true }, { name: 'notes', type: 'text' }, { name: 'count', type: 'integer' }]);
    const r = await record('re_edit', { title: 'Old', notes: 'drop me', count: 1 });
    await ui.goto('#/collections/re_edit');
    await ui.byTestId('record-row').filter({ hasText: 'Old' }).locator('td').last().click();
    await ui.byTestId('record-form').waitFor();
    expect(ui.page.url()).toContain(`/records/${r.id}`);
    await field('title').fill('New');
    await field('notes').fill('');
    const sent = ui.page.waitForRequest(writes('PATCH'));
    await ui.byTestId('record-submit').click();
    const request = await sent;
    expect(request.headers()['if-match']).toBe('"1"');
    expect(request.postDataJSON()).toEqual({ data: { title: 'New', notes: null } });
    await expect.poll(() => ui.byTestId('record-notice').textContent()).toBe('Saved: version 2.');
    expect((await stored('re_edit', r.id)).json).toMatchObject({ version: 2, data: { title: 'New', count: 1 } });
    expect((await stored('re_edit', r.id)).json.data).not.toHaveProperty('notes');
    expect(await ui.byTestId('record-version').textContent()).toBe('2');
    await ui.byTestId('record-submit').click();
    await expect.poll(() => ui.byTestId('record-notice').textContent()).toBe('Nothing to save: no field was changed.');
    expect(ui.problems).toEqual([]);
  });

  it('shows a version conflict plainly: overwrite keeps the other change where untouched, reload takes theirs', async () => {
    await ui.collection('re_race', [{ name: 'title', type: 'text' }, { name: 'count', type: 'integer' }]);
    const r = await record('re_race', { title: 'A', count: 1 });
    await ui.goto(`#/collections/re_race/records/${r.id}`);
    await ui.byTestId('record-form').waitFor();
    await patch('re_race', r.id, { count: 2 });
    await field('title').fill('Mine');
    await ui.byTestId('record-submit').click();
    const panel = ui.byTestId('record-conflict');
    await panel.waitFor();
    expect(await ui.byTestId('conflict-versions').textContent()).toBe('You opened version 1; it is now at version 2. Your changes were not saved.');
    expect(await ui.byTestId('conflict-fields').textContent()).toBe('Changed meanwhile: count.');
    expect(provoked(ui, 412)).toBe(1);
    await ui.screenshots('record-conflict');
    await expectClean(ui);
    await ui.byTestId('conflict-overwrite').click();
    await expect.poll(() => ui.byTestId('record-notice').textContent()).toBe('Saved: version 3.');
    expect(await panel.count()).toBe(0);
    expect((await stored('re_race', r.id)).json).toMatchObject({ version: 3, data: { title: 'Mine', count: 2 } });

    await patch('re_race', r.id, { title: 'Theirs' });
    await field('title').fill('Again');
    await ui.byTestId('record-submit').click();
    await expect.poll(() => ui.byTestId('conflict-fields').textContent()).toBe('Changed meanwhile: title (you changed it too).');
    await ui.byTestId('conflict-reload').click();
    await expect.poll(() => field('title').inputValue()).toBe('Theirs');
    expect(await ui.byTestId('record-version').textContent()).toBe('4');
    expect((await stored('re_race', r.id)).json).toMatchObject({ version: 4, data: { title: 'Theirs', count: 2 } });
    expect(provoked(ui, 412)).toBe(1);
    expect(ui.problems).toEqual([]);
  });

  it('deletes through a confirmation dialog, and a delete that lost a race says so', async () => {
    await ui.collection('re_delete', [{ name: 'title', type: 'text' }]);
    const r = await record('re_delete', { title: 'Doomed' });
    await ui.goto(`#/collections/re_delete/records/${r.id}`);
    await ui.byTestId('delete-record').click();
    await ui.byTestId('confirm-dialog').waitFor();
    expect(await ui.byTestId('confirm-message').textContent()).toContain(r.id);
    await ui.screenshots('record-delete-dialog');
    expect(await ui.axe()).toEqual([]);
    await ui.byTestId('confirm-cancel').click();
    expect((await stored('re_delete', r.id)).status).toBe(200);
    await ui.byTestId('delete-record').click();
    await ui.byTestId('confirm-ok').click();
    await expect.poll(() => ui.byTestId('records-notice').textContent()).toBe(`Record ${r.id} deleted.`);
    expect(ui.page.url()).toMatch(/#\/collections\/re_delete$/);
    expect((await stored('re_delete', r.id)).status).toBe(404);
    // Its old address says it is gone, and offers no delete.
    await ui.goto(`#/collections/re_delete/records/${r.id}`);
    await expect.poll(() => ui.byTestId('record-missing').textContent()).toContain(`No record ${r.id} in re_delete`);
    expect(await ui.byTestId('delete-record').count()).toBe(0);
    expect(provoked(ui, 404)).toBe(1);

    const raced = await record('re_delete', { title: 'Raced' });
    await ui.goto(`#/collections/re_delete/records/${raced.id}`);
    await ui.byTestId('record-form').waitFor();
    await patch('re_delete', raced.id, { title: 'Changed' });
    await ui.byTestId('delete-record').click();
    await ui.byTestId('confirm-ok').click();
    await expect.poll(() => ui.byTestId('conflict-versions').textContent()).toBe('You opened version 1; it is now at version 2. It was not deleted.');
    expect((await stored('re_delete', raced.id)).status).toBe(200);
    await ui.byTestId('conflict-overwrite').click();
    await expect.poll(() => ui.byTestId('records-notice').textContent()).toBe(`Record ${raced.id} deleted.`);
    expect((await stored('re_delete', raced.id)).status).toBe(404);
    expect(provoked(ui, 412)).toBe(1);
    expect(ui.problems).toEqual([]);
  });
});
