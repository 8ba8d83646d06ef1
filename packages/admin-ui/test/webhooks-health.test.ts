/**
 * The webhooks list's health column (issue 24 item 5): each target's success rate and a sparkline of its last 24
 * hours, from real attempts to the harness's receiver; a target without attempts says "no attempts yet", in the list
 * and on its page (where the chart was an empty grey box).
 */
import { describe, expect, it } from 'vitest';
import { expectClean } from './ui-checks.js';
import { hasChromium, useUi } from './harness.js';

describe.skipIf(!hasChromium)('webhooks list: health column', () => {
  const ui = useUi();


  it('shows each target’s success rate and 24-hour sparkline, and “no attempts yet” for a new one', async () => {
    await ui.collection('wh_health', [{ name: 'title', type: 'text' }]);
    // One receiver for the file: it fails what asks to fail, so this test needs no handler switching.
    ui.receiver.setHandler((_req, res, body) => {
      res.statusCode = body.includes('please fail') ? 500 : 200;
      res.end();
    });
    const busy = await ui.admin('POST', '/admin/v1/webhooks', { name: 'Busy receiver', url: ui.receiver.url, topics: ['record.created'], collections: ['wh_health'] });
    const fresh = await ui.admin('POST', '/admin/v1/webhooks', { name: 'Brand new', url: ui.receiver.url, topics: ['record.deleted'], collections: ['wh_health'] });
    expect([busy.status, fresh.status]).toEqual([201, 201]);
    const token = await ui.token();
    for (const title of ['one', 'two', 'three', 'please fail']) {
      expect((await ui.api(token, 'POST', '/collections/wh_health/records', { data: { title } })).status).toBe(201);
    }
    // Three delivered at once; the failing one dead after the schedule's two attempts (0s, 1s).
    await expect.poll(async () => (await ui.admin('GET', `/admin/v1/deliveries?webhookId=${busy.json.id}`)).json.items.map((j: { state: string }) => j.state).sort(),
      { timeout: 20_000 }).toEqual(['dead', 'delivered', 'delivered', 'delivered']);

    // The statistics come in one request for the page (GET /admin/v1/webhooks/stats), not one per target.
    const statsCalls: string[] = [];
    const record = (req: { url(): string }) => {
      const path = new URL(req.url()).pathname;
      if (path.startsWith('/admin/v1/webhooks/') && path.endsWith('/stats')) statsCalls.push(path);
    };
    ui.page.on('request', record);
    await ui.goto('#/webhooks');
    const busyRow = ui.page.locator(`[data-testid="webhook-row"][data-id="${busy.json.id}"]`);
    const freshRow = ui.page.locator(`[data-testid="webhook-row"][data-id="${fresh.json.id}"]`);
    await busyRow.getByTestId('health-sparkline').waitFor();
    expect(await busyRow.getByTestId('health-rate').textContent()).toBe('60 %');
    const spark = busyRow.getByTestId('health-sparkline');
    expect(await spark.getAttribute('aria-label')).toBe('Last 24 hours, hour by hour: 3 of 5 attempts succeeded, 2 failed');
    // 25 hourly buckets (the window's first hour partly), 4 units each; every attempt in the last one (or the two
    // last, if the test ran across the hour).
    expect(await spark.getAttribute('viewBox')).toBe('0 0 100 24');
    const xs = async (cls: string) => spark.locator(`rect.${cls}`).evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('x'))));
    expect((await xs('chart-ok')).every((x) => x >= 92)).toBe(true);
    expect((await xs('chart-failed')).every((x) => x >= 92)).toBe(true);
    expect((await xs('chart-failed')).length).toBeGreaterThan(0);
    expect(await freshRow.getByTestId('health-none').textContent()).toBe('no attempts yet');
    expect(await freshRow.getByTestId('health-sparkline').count()).toBe(0);
    expect(statsCalls).toEqual(['/admin/v1/webhooks/stats']);
    statsCalls.length = 0;
    // The overview: the same figures, every target's from the pages of GET /admin/v1/webhooks/stats.
    await ui.goto('#/health');
    const overviewRow = ui.page.locator(`[data-testid="health-row"][data-id="${busy.json.id}"]`);
    await overviewRow.waitFor();
    expect(await overviewRow.getByTestId('health-rate').textContent()).toBe('60 %');
    expect(await overviewRow.locator('td.num').textContent()).toBe('3 / 5');
    expect(await ui.page.locator(`[data-testid="health-row"][data-id="${fresh.json.id}"]`).getByTestId('health-rate').textContent()).toBe('—');
    expect(statsCalls.length).toBeGreaterThan(0);
    expect(statsCalls.every((p) => p === '/admin/v1/webhooks/stats')).toBe(true);
    ui.page.off('request', record);
    await ui.screenshots('webhooks-health');
    await expectClean(ui);

    // The new target's page: the chart's place says so, and the busy one's still draws its chart.
    await ui.goto(`#/webhooks/${fresh.json.id}`);
    await ui.byTestId('health-chart-empty').waitFor();
    expect(await ui.byTestId('health-chart-empty').textContent()).toMatch(/^no attempts yet — /);
    expect(await ui.byTestId('health-chart').count()).toBe(0);
    await ui.screenshots('target-no-attempts');
    await expectClean(ui);
    await ui.goto(`#/webhooks/${busy.json.id}`);
    await ui.byTestId('health-chart').waitFor();
    expect(await ui.byTestId('health-chart-empty').count()).toBe(0);
    expect(ui.problems).toEqual([]);
  });
});
