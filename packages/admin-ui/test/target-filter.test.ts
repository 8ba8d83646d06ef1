/**
 * A target's filter in the browser (issue 24 item 2): the target page shows every subscription field, the form's
 * filter field shows the server's fault with a caret at its position, a saved filter decides which records are
 * delivered to a real receiver; and a refused private URL points to svc listen and SVC_WEBHOOK_ALLOW_CIDRS (item 7).
 */
import { describe, expect, it } from 'vitest';
import { expectClean, provoked } from './ui-checks.js';
import { hasChromium, useUi } from './harness.js';

describe.skipIf(!hasChromium)('a target’s filter and URL in the admin UI', () => {
  const ui = useUi();


  const target = async (body: Record<string, unknown>): Promise<string> => {
    const res = await ui.admin('POST', '/admin/v1/webhooks', { url: ui.receiver.url, ...body });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    return res.json.id;
  };


  const save = async () => {
    await ui.byTestId('webhook-submit').click();
  };

  it('shows the fault with a caret at the server’s position, saves the filter, shows it, and delivers only matching records', async () => {
    await ui.collection('tf_orders', [{ name: 'status', type: 'text' }, { name: 'total', type: 'number' }]);
    const id = await target({ name: 'Open orders', topics: ['record.created'], collections: ['tf_orders'] });
    await ui.goto(`#/webhooks/${id}`);
    expect(await ui.byTestId('subscription-filter').textContent()).toMatch(/^None/);
    expect(await ui.byTestId('subscription-collections').textContent()).toBe('tf_orders');

    // A field the collection does not have: the server's position, not one the UI guessed.
    const wrong = "status = 'open' && totl > 3";
    const direct = await ui.admin('PATCH', `/admin/v1/webhooks/${id}`, { filter: wrong });
    expect(direct.status).toBe(422);
    const position: number = direct.json.errors[0].position;
    expect(position).toBe(wrong.indexOf('totl'));

    await ui.byTestId('webhook-filter').fill(wrong);
    await save();
    await ui.byTestId('error-filter').waitFor();
    expect(await ui.byTestId('error-filter').textContent()).toContain(`at position ${position}`);
    expect(await ui.byTestId('webhook-filter').getAttribute('aria-invalid')).toBe('true');
    const caret = (await ui.byTestId('filter-error-caret').textContent())!.split('\n');
    expect(caret).toEqual([wrong, `${' '.repeat(position)}^`]);
    await ui.screenshots('target-filter-caret');
    await expectClean(ui);

    const right = "status = 'open' && total > 3";
    await ui.byTestId('webhook-filter').fill(right);
    await save();
    await ui.byTestId('webhook-saved').waitFor();
    expect(await ui.byTestId('filter-error-caret').count()).toBe(0);
    await ui.page.reload();
    await ui.byTestId('subscription-facts').waitFor();
    expect(await ui.byTestId('subscription-filter').textContent()).toBe(right);
    expect(await ui.byTestId('webhook-filter').inputValue()).toBe(right);
    await ui.screenshots('target-page-subscription');
    await expectClean(ui);

    // Jobs are made (or not) in the write's own transaction (SPEC §9): once the write answers, the list is final.
    const token = await ui.token();
    const open = await ui.api(token, 'POST', '/collections/tf_orders/records', { data: { status: 'open', total: 5 } });
    const closed = await ui.api(token, 'POST', '/collections/tf_orders/records', { data: { status: 'closed', total: 9 } });
    const small = await ui.api(token, 'POST', '/collections/tf_orders/records', { data: { status: 'open', total: 1 } });
    expect([open.status, closed.status, small.status]).toEqual([201, 201, 201]);
    const jobs = await ui.admin('GET', `/admin/v1/deliveries?webhookId=${id}`);
    expect(jobs.json.items.map((j: { recordId: string }) => j.recordId)).toEqual([open.json.id]);
    await expect.poll(() => ui.receiver.requests.some((r) => r.body.includes(open.json.id)), { timeout: 15_000 }).toBe(true);
    expect(provoked(ui, 422)).toBe(1);
    expect(ui.problems).toEqual([]);
  });

  it('puts a filter without collections at the field, with no caret (the fault has no position)', async () => {
    const id = await target({ name: 'Everything', topics: ['record.created'] });
    await ui.goto(`#/webhooks/${id}`);
    await ui.byTestId('webhook-filter').fill("status = 'open'");
    await save();
    await ui.byTestId('error-filter').waitFor();
    expect(await ui.byTestId('error-filter').textContent()).toContain('requires collections');
    expect(await ui.byTestId('filter-error-caret').count()).toBe(0);
    expect(await ui.axe()).toEqual([]);
    expect(provoked(ui, 422)).toBe(1);
    expect(ui.problems).toEqual([]);
  });

  it('points a refused private URL to svc listen and to SVC_WEBHOOK_ALLOW_CIDRS as in force, and not a refused metadata address', async () => {
    const id = await target({ name: 'Local receiver', topics: ['record.created'] });
    await ui.goto(`#/webhooks/${id}`);
    await ui.byTestId('webhook-url').fill('https://10.1.2.3:8443/hooks');
    await save();
    const hint = ui.byTestId('local-dev-hint');
    await hint.waitFor();
    expect(await ui.byTestId('error-url').textContent()).toMatch(/private/);
    expect(await ui.byTestId('local-dev-listen').textContent()).toBe(
      `svc listen --url ${new URL(ui.srv.baseUrl).origin} --token <token with events:read> --forward-to https://10.1.2.3:8443/hooks`);
    const allow = await ui.byTestId('local-dev-allow').textContent();
    expect(allow).toContain('SVC_WEBHOOK_ALLOW_CIDRS');
    // The harness runs svc with SVC_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8: the example keeps it and adds the refused address.
    expect(await ui.byTestId('local-dev-example').textContent()).toBe('SVC_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,10.1.2.3/32');
    expect(allow).toContain('now 127.0.0.0/8');
    expect(await hint.textContent()).toContain('docs/local-development.md');
    await ui.screenshots('target-local-dev-hint');
    await expectClean(ui);

    // Neither way reaches a metadata address: the refusal stands alone, and the earlier hint is gone.
    await ui.byTestId('webhook-url').fill('https://168.63.129.16/hooks');
    await save();
    await expect.poll(() => ui.byTestId('error-url').textContent(), { timeout: 10_000 }).toMatch(/metadata/);
    expect(await hint.count()).toBe(0);
    expect(provoked(ui, 422)).toBe(2);
    expect(ui.problems).toEqual([]);
  });
});
