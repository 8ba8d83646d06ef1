/**
 * Every page of the admin UI, with data in it: axe-core (WCAG 2 A/AA) finds nothing, nothing is wider than a 390 px
 * phone, and each is photographed at 1366 px and 390 px into test/screenshots/ (git-ignored) to be looked at
 * (issue 24). The login and first-run setup pages are walked by ui.test.ts; here they are checked logged out.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium, useUi } from './harness.js';
import { expectClean } from './ui-checks.js';

describe.skipIf(!hasChromium)('every page of the admin UI', () => {
  const ui = useUi();

  /** A route, drawn: its title is shown and nothing on it is still loading. */
  async function open(hash: string): Promise<void> {
    await ui.goto(hash);
    await ui.page.locator('main h1, h1').first().waitFor();
    await expect.poll(() => ui.page.locator('.loading, [aria-busy="true"]').count(), { timeout: 10_000 }).toBe(0);
  }

  it('passes axe and fits a phone on every page, with data in it', async () => {
    await ui.collection('tickets', [
      { name: 'subject', type: 'text', required: true },
      { name: 'severity', type: 'integer', indexed: true },
      { name: 'open', type: 'boolean' },
      { name: 'due', type: 'datetime' },
      { name: 'meta', type: 'json' },
    ]);
    const token = await ui.token();
    const target = await ui.admin('POST', '/admin/v1/webhooks', {
      name: 'tickets to the receiver',
      url: `${ui.receiver.url}/hook`,
      topics: ['record.created', 'record.updated'],
      collections: ['tickets'],
      filter: 'severity >= 2',
      headers: { 'X-Api-Key': 'receiver-key-12345678' },
      rateLimit: { perSecond: 50 },
    });
    expect(target.status).toBe(201);
    const records: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await ui.api(token, 'POST', '/collections/tickets/records', { data: { subject: `ticket ${i}`, severity: i, open: i % 2 === 0, meta: { tags: ['a'] } } });
      expect(res.status).toBe(201);
      records.push(res.json.id);
    }
    const deliveries = await expect
      .poll(async () => (await ui.admin('GET', '/admin/v1/deliveries?limit=10')).json.items.filter((j: { state: string }) => j.state === 'delivered'), { timeout: 20_000 })
      .toHaveLength(3)
      .then(async () => (await ui.admin('GET', '/admin/v1/deliveries?limit=10')).json.items);
    const events = (await ui.admin('GET', '/admin/v1/events?limit=10')).json.items;

    const pages: Array<[string, string]> = [
      ['collections', '#/collections'],
      ['collection', '#/collections/tickets'],
      ['record', `#/collections/tickets/records/${records[2]}`],
      ['record-new', '#/collections/tickets/records/new'],
      ['schema', '#/schema'],
      ['tokens', '#/tokens'],
      ['webhooks', '#/webhooks'],
      ['webhook-new', '#/webhooks/new'],
      ['webhook', `#/webhooks/${target.json.id}`],
      ['health', '#/health'],
      ['deliveries', '#/deliveries'],
      ['delivery', `#/deliveries/${deliveries[0].id}`],
      ['events', '#/events'],
      ['event', `#/events/${events[0].id}`],
      ['admins', '#/admins'],
      ['account', '#/account'],
    ];
    for (const [name, hash] of pages) {
      await open(hash).catch((err: Error) => {
        throw new Error(`${name} (${hash}) was not drawn: ${err.message}`);
      });
      await expectClean(ui);
      await ui.screenshots(`page-${name}`);
    }
    expect(ui.problems).toEqual([]);
  }, 180_000);

  it('the login page passes axe and fits a phone, logged out', async () => {
    const context = await ui.page.context().browser()!.newContext({ viewport: { width: 1366, height: 860 } });
    try {
      const page = await context.newPage();
      await page.goto(ui.url('/admin/'));
      await page.getByTestId('login-form').waitFor();
      // The harness's checks run on its own page: point them at this one for the moment.
      const own = ui.page;
      Object.assign(ui, { page });
      try {
        await expectClean(ui);
        await ui.screenshots('page-login');
      } finally {
        Object.assign(ui, { page: own });
      }
    } finally {
      await context.close();
    }
  });
});
