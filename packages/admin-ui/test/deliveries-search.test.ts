/**
 * Finding deliveries (issue 24 item 3), against real jobs: by delivery, event and record id, by topic, state and
 * creation time, all answered by GET /admin/v1/deliveries (SPEC §17) and kept in the address; a compact table (35 jobs,
 * ids and a TLS error on one line each, ids copied whole); a disabled target's job held instead of overdue; the dead
 * jobs shown retried at once; and each job a card at phone width.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { expectClean, provoked } from './ui-checks.js';
import { hasChromium, useUi, type HttpsReceiver } from './harness.js';

describe.skipIf(!hasChromium)('deliveries: search, filters, compact table, bulk retry', () => {
  const ui = useUi();

  const answer = (fail: (body: string) => boolean) =>
    ui.receiver.setHandler((_req: IncomingMessage, res: ServerResponse, body: string) => {
      res.statusCode = fail(body) ? 500 : 200;
      res.end();
    });
  const target = async (body: Record<string, unknown>, url = ui.receiver.url): Promise<string> => {
    const res = await ui.admin('POST', '/admin/v1/webhooks', { url, ...body });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    return res.json.id;
  };
  const jobs = async (query: string): Promise<any[]> => {
    const res = await ui.admin('GET', `/admin/v1/deliveries?${query}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.items;
  };
  const settled = (query: string, count: number) =>
    expect.poll(async () => (await jobs(query)).filter((j) => j.state === 'delivered' || j.state === 'dead').length, { timeout: 25_000 }).toBe(count);
  /** A navigation and its answer, on a machine other tests load too: more than poll's 1 s default. */
  const drawn = { timeout: 10_000 };
  const rows = () => ui.byTestId('delivery-row');
  const rowIds = () => rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));
  const search = async (text: string) => {
    await ui.byTestId('deliveries-search').fill(text);
    await ui.byTestId('deliveries-apply').click();
  };

  it('finds jobs by delivery, event and record id, and filters by topic, state and time, kept in the address', async () => {
    answer(() => false);
    await ui.collection('ds_find', [{ name: 'title', type: 'text' }]);
    const wh = await target({ name: 'Finder', topics: ['record.created', 'record.updated'], collections: ['ds_find'] });
    const token = await ui.token();
    const first = (await ui.api(token, 'POST', '/collections/ds_find/records', { data: { title: 'first' } })).json.id as string;
    expect((await ui.api(token, 'PATCH', `/collections/ds_find/records/${first}`, { data: { title: 'first, edited' } })).status).toBe(200);
    const second = (await ui.api(token, 'POST', '/collections/ds_find/records', { data: { title: 'second' } })).json.id as string;
    await settled(`webhookId=${wh}`, 3);
    const all = await jobs(`webhookId=${wh}`);
    const update = all.find((j) => j.topic === 'record.updated');
    const secondJob = all.find((j) => j.recordId === second);
    const updateEvent = (await ui.admin('GET', `/admin/v1/deliveries/${update.id}`)).json.envelope.payload.eventId as string;
    expect(updateEvent).toMatch(/^evt_/);

    await ui.goto(`#/deliveries?webhookId=${wh}`);
    await expect.poll(rowIds, drawn).toEqual(all.map((j) => j.id));
    expect(await ui.byTestId('filter-webhook').inputValue()).toBe(wh);

    await search(first);
    await expect.poll(() => ui.page.url()).toContain(`q=${first}`);
    await expect.poll(rowIds, drawn).toEqual(all.filter((j) => j.recordId === first).map((j) => j.id));
    expect(await rows().count()).toBe(2);

    await search(updateEvent);
    await expect.poll(rowIds, drawn).toEqual([update.id]);
    expect(await ui.byTestId('delivery-topic').textContent()).toBe('record.updated');

    // A delivery id names one job, whatever the other filters say.
    await search(secondJob.id);
    await expect.poll(rowIds, drawn).toEqual([secondJob.id]);
    expect(await ui.byTestId('deliveries-count').textContent()).toMatch(/^One delivery, by its id/);
    await ui.screenshots('deliveries-search-id');
    expect(await ui.axe()).toEqual([]);

    // Not an id: said at the box, no request made.
    await search('hello');
    await ui.byTestId('error-q').waitFor();
    expect(await ui.byTestId('deliveries-search').getAttribute('aria-invalid')).toBe('true');
    expect(ui.page.url()).toContain(`q=${secondJob.id}`);

    await ui.goto(`#/deliveries?webhookId=${wh}`);
    await expect.poll(() => rows().count(), drawn).toBe(3);
    await ui.byTestId('filter-topics-summary').click();
    await ui.byTestId('filter-topic-record.updated').check();
    expect(await ui.byTestId('filter-topics-summary').textContent()).toBe('record.updated');
    await ui.byTestId('deliveries-apply').click();
    await expect.poll(rowIds, drawn).toEqual([update.id]);
    expect(ui.page.url()).toContain('topic=record.updated');
    // Applying draws the page again from its address: the list is closed, the choice kept.
    await ui.byTestId('filter-topics-summary').click();
    expect(await ui.byTestId('filter-topic-record.updated').isChecked()).toBe(true);
    await ui.byTestId('filter-topic-record.created').check();
    await ui.byTestId('deliveries-apply').click();
    await expect.poll(() => rows().count(), drawn).toBe(3);
    expect(await ui.byTestId('filter-topics-summary').textContent()).toBe('2 topics');

    // The state select applies at once.
    await ui.byTestId('filter-state').selectOption('dead');
    await ui.byTestId('deliveries-table-empty').waitFor();
    expect(await ui.byTestId('deliveries-table-empty').textContent()).toBe('No deliveries match these filters.');
    await ui.byTestId('filter-state').selectOption('delivered');
    await expect.poll(() => rows().count(), drawn).toBe(3);

    // Time, from the address to the millisecond (the inputs are to the minute): since the second record's job.
    await ui.goto(`#/deliveries?webhookId=${wh}&since=${encodeURIComponent(secondJob.createdAt)}`);
    await expect.poll(rowIds, drawn).toEqual([secondJob.id]);
    await ui.goto(`#/deliveries?webhookId=${wh}&until=${encodeURIComponent(update.createdAt)}`);
    await expect.poll(() => rows().count(), drawn).toBe(2);
    // And through the inputs: from the next minute on there is nothing yet, from the minute before there is all.
    const minute = (offset: number) => {
      const d = new Date(Date.now() + offset * 60_000);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
    };
    await ui.goto(`#/deliveries?webhookId=${wh}`);
    await ui.byTestId('filter-since').fill(minute(1));
    await ui.byTestId('deliveries-apply').click();
    await ui.byTestId('deliveries-table-empty').waitFor();
    await ui.byTestId('filter-since').fill(minute(-2));
    await ui.byTestId('deliveries-apply').click();
    await expect.poll(() => rows().count(), drawn).toBe(3);

    // The server's invalid_query lands on its control.
    await ui.goto(`#/deliveries?webhookId=${wh}&until=yesterday`);
    await ui.byTestId('error-until').waitFor();
    expect(await ui.byTestId('filter-until').getAttribute('aria-invalid')).toBe('true');
    expect(provoked(ui, 400)).toBe(1);
    expect(ui.problems).toEqual([]);
  });

  it('keeps 35 jobs compact: ids and a TLS error on one line, ids copied whole, a card per job at phone width', async () => {
    answer(() => false);
    await ui.collection('ds_many', [{ name: 'n', type: 'integer' }]);
    // A receiver whose certificate svc does not trust: every attempt fails in the TLS handshake.
    const { startHttpsReceiver } = (await import('../../server/test/helpers/https-receiver.js')) as {
      startHttpsReceiver(opts: { altNames: string[] }): Promise<HttpsReceiver>;
    };
    const untrusted = await startHttpsReceiver({ altNames: ['127.0.0.1'] });
    try {
      const since = new Date(Date.now() - 1).toISOString();
      const ok = await target({ name: 'Many', topics: ['record.created'], collections: ['ds_many'] });
      const tls = await target({ name: 'Untrusted certificate receiver with a long name', topics: ['record.updated'], collections: ['ds_many'] }, untrusted.url);
      const token = await ui.token();
      const ids: string[] = [];
      for (let n = 0; n < 30; n += 1) ids.push((await ui.api(token, 'POST', '/collections/ds_many/records', { data: { n } })).json.id);
      for (const id of ids.slice(0, 5)) expect((await ui.api(token, 'PATCH', `/collections/ds_many/records/${id}`, { data: { n: -1 } })).status).toBe(200);
      await settled(`webhookId=${ok}`, 30);
      await settled(`webhookId=${tls}`, 5);
      const dead = await jobs(`webhookId=${tls}`);
      expect(dead.every((j) => j.state === 'dead' && j.lastError.code === 'tls_failed')).toBe(true);

      await ui.goto(`#/deliveries?since=${encodeURIComponent(since)}`);
      await expect.poll(() => rows().count(), drawn).toBe(35);
      // One line a job: 35 rows, not the 5,000 px page of wrapped ids and errors.
      const heights = await rows().evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
      expect(Math.max(...heights)).toBeLessThan(44);
      const pageHeight = await ui.page.evaluate(() => document.documentElement.scrollHeight);
      expect(pageHeight).toBeLessThan(2200);
      // The id and the error are cut at their end, each one line high, and whole in their tooltips.
      const error = ui.byTestId('delivery-error').first();
      const box = await error.evaluate((el) => ({ h: el.getBoundingClientRect().height, line: parseFloat(getComputedStyle(el).lineHeight), cut: el.scrollWidth > el.clientWidth, overflow: getComputedStyle(el).textOverflow }));
      expect(box.h).toBeLessThan(box.line * 1.5);
      expect(box).toMatchObject({ cut: true, overflow: 'ellipsis' });
      expect(await error.getAttribute('title')).toBe(`tls_failed: ${dead[0].lastError.message}`);
      const link = ui.byTestId('delivery-link').first();
      expect(await link.evaluate((el) => getComputedStyle(el).whiteSpace)).toBe('nowrap');
      expect(await link.getAttribute('title')).toBe(await link.textContent());
      await ui.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(ui.srv.baseUrl).origin });
      await rows().first().getByTestId('copy-id').first().click();
      await expect.poll(() => ui.page.evaluate(() => navigator.clipboard.readText())).toBe(await link.textContent());
      await ui.screenshots('deliveries-35-jobs');
      await expectClean(ui);
      await ui.page.setViewportSize({ width: 390, height: 844 });
      try {
        // Cards of two labelled values a line, id and error across: no value squeezed (a 9-column table gave ~50 px).
        const widths = await ui.page.locator('[data-testid="delivery-row"] td').evaluateAll((tds) => tds.map((td) => td.getBoundingClientRect().width));
        expect(Math.min(...widths)).toBeGreaterThan(140);
        const cardHeights = await rows().evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
        // 304 px a card measured (one labelled line per value: 387 px).
        expect(Math.max(...cardHeights)).toBeLessThan(330);
        expect(await ui.axe()).toEqual([]);
      } finally {
        await ui.page.setViewportSize({ width: 1366, height: 860 });
      }
    } finally {
      await untrusted.close();
    }
    expect(ui.problems).toEqual([]);
  }, 90_000); // 35 jobs written and failed, then the page at two widths: 22 to 30 s on a loaded two-core machine

  it('says a disabled target’s job is held, instead of a next attempt in the past', async () => {
    await ui.collection('ds_held', [{ name: 'title', type: 'text' }]);
    const wh = await target({ name: 'Soon disabled', topics: ['record.created'], collections: ['ds_held'] });
    // The attempt stays open until the target is disabled, then fails: the job waits for its next attempt, held.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    ui.receiver.setHandler(async (_req, res) => {
      await gate;
      res.statusCode = 500;
      res.end();
    });
    const token = await ui.token();
    const record = (await ui.api(token, 'POST', '/collections/ds_held/records', { data: { title: 'held' } })).json.id as string;
    await expect.poll(() => ui.receiver.requests.some((r) => r.body.includes(record)), { timeout: 15_000 }).toBe(true);
    expect((await ui.admin('PATCH', `/admin/v1/webhooks/${wh}`, { enabled: false })).status).toBe(200);
    release();
    await expect.poll(async () => (await jobs(`webhookId=${wh}`)).map((j) => [j.state, j.attemptCount, j.heldBy]), { timeout: 15_000 })
      .toEqual([['pending', 1, 'target_disabled']]);
    answer(() => false);

    await ui.goto(`#/deliveries?webhookId=${wh}`);
    await rows().first().waitFor();
    expect(await ui.byTestId('delivery-held').textContent()).toBe('held: target disabled');
    expect(await ui.byTestId('delivery-next').locator('time').count()).toBe(0);
    // A held job does not move on its own: the page does not keep polling for it.
    await expect.poll(() => ui.byTestId('auto-refresh').textContent(), drawn).toMatch(/^Updated/);
    await ui.screenshots('deliveries-held');
    expect(await ui.axe()).toEqual([]);
    await ui.byTestId('delivery-link').click();
    await ui.byTestId('delivery-held').waitFor();
    expect(await ui.byTestId('delivery-next-attempt').textContent()).toBe('held: target disabled');
    expect(ui.problems).toEqual([]);
  });

  it('retries the dead jobs shown in one go, and names the ones skipped', async () => {
    answer((body) => body.includes('bulk-fail'));
    await ui.collection('ds_bulk', [{ name: 'title', type: 'text' }]);
    const wh = await target({ name: 'Bulk', topics: ['record.created'], collections: ['ds_bulk'] });
    const token = await ui.token();
    for (let i = 0; i < 3; i += 1) expect((await ui.api(token, 'POST', '/collections/ds_bulk/records', { data: { title: `bulk-fail ${i}` } })).status).toBe(201);
    await settled(`webhookId=${wh}`, 3);
    const dead = await jobs(`webhookId=${wh}&state=dead`);
    expect(dead).toHaveLength(3);

    await ui.goto(`#/deliveries?webhookId=${wh}&state=dead`);
    await expect.poll(() => rows().count(), drawn).toBe(3);
    const bulk = ui.byTestId('retry-dead-shown');
    expect(await bulk.textContent()).toBe('Retry 3 dead jobs shown');
    answer(() => false);
    // Meanwhile one is retried on its own: the bulk retry skips it, and says why.
    expect((await ui.admin('POST', `/admin/v1/deliveries/${dead[0].id}/retry`)).status).toBe(200);
    await bulk.click();
    await ui.byTestId('confirm-dialog').waitFor();
    expect(await ui.axe()).toEqual([]);
    await ui.byTestId('confirm-ok').click();
    await expect.poll(() => ui.byTestId('bulk-retry-result').textContent(), drawn)
      .toBe(`2 jobs sent back for another round. Skipped 1: ${dead[0].id} (not_dead).`);
    await ui.screenshots('deliveries-bulk-retry');
    await expect.poll(async () => (await jobs(`webhookId=${wh}`)).map((j) => `${j.state}/${j.attemptCount}`), { timeout: 20_000 })
      .toEqual(['delivered/3', 'delivered/3', 'delivered/3']);
    await ui.byTestId('refresh-deliveries').click();
    await ui.byTestId('deliveries-table-empty').waitFor();
    expect(await bulk.count()).toBe(0);
    expect(ui.problems).toEqual([]);
  });
});
