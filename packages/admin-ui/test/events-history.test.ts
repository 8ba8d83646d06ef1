/**
 * Events (issue 24 item 4) against a real feed: a row opens the event's page with its payload and its deliveries
 * (GET /admin/v1/events/{id}, SPEC §17); the feed starts from a cursor or from a time, shows what came since and then
 * what comes live, pauses itself once 200 rows are full and resumes after them; pause and resume as before; and an
 * empty feed says so.
 */
import { describe, expect, it } from 'vitest';
import { expectClean } from './ui-checks.js';
import { hasChromium, useUi } from './harness.js';

describe.skipIf(!hasChromium)('events: event page, history, empty state', () => {
  const ui = useUi();

  const eventRows = () => ui.byTestId('event-row');
  /** Record ids of the rows, top (newest) first. */
  const shownRecords = () => eventRows().evaluateAll((trs) => trs.map((tr) => tr.querySelector('td[data-label="Record"]')?.textContent ?? ''));
  const create = async (token: string, collection: string, title: string): Promise<string> => {
    const res = await ui.api(token, 'POST', `/collections/${collection}/records`, { data: { title } });
    expect(res.status).toBe(201);
    return res.json.id;
  };
  /** An event reaches a waiting stream on the commit's wake-up, or within a second (docs/event-feed.md): more than poll's 1 s default. */
  const stream = { timeout: 10_000 };
  /** The feed's head: a cursor before anything written from now on. */
  const head = async (): Promise<string> => (await ui.admin('GET', '/admin/v1/events?after=now&limit=1')).json.nextCursor;
  const live = () => expect.poll(() => ui.byTestId('events-status').textContent(), stream).toBe('live');

  it('opens an event’s page from its row: the payload and the jobs it made', async () => {
    ui.receiver.setHandler((_req, res) => res.writeHead(200).end());
    await ui.collection('eh_rows', [{ name: 'title', type: 'text' }]);
    const wh = await ui.admin('POST', '/admin/v1/webhooks', { name: 'Event rows', url: ui.receiver.url, topics: ['record.created'], collections: ['eh_rows'] });
    expect(wh.status, JSON.stringify(wh.json)).toBe(201);
    const token = await ui.token();
    await ui.goto('#/events?collection=eh_rows');
    await live();
    const record = await create(token, 'eh_rows', 'Shown on its event page');
    await expect.poll(shownRecords, stream).toEqual([record]);
    await expect.poll(async () => (await ui.admin('GET', `/admin/v1/deliveries?webhookId=${wh.json.id}`)).json.items.map((j: { state: string }) => j.state), { timeout: 15_000 })
      .toEqual(['delivered']);
    const eventId = await eventRows().first().getAttribute('data-id');

    // Anywhere on the row, not only its link.
    await eventRows().first().locator('td[data-label="When"]').click();
    await ui.page.waitForURL(new RegExp(`#/events/${eventId}$`));
    await ui.byTestId('event-facts').waitFor();
    expect(await ui.byTestId('event-topic').textContent()).toBe('record.created');
    expect(await ui.byTestId('event-record').textContent()).toBe(record);
    expect(JSON.parse((await ui.byTestId('event-payload').textContent())!)).toMatchObject({ record: { id: record, data: { title: 'Shown on its event page' } } });
    const job = ui.byTestId('delivery-row');
    await expect.poll(() => job.count()).toBe(1);
    expect(await job.getAttribute('data-state')).toBe('delivered');
    await expect.poll(() => job.locator('a[data-webhook]').textContent(), stream).toBe('Event rows');
    await ui.screenshots('event-page');
    await expectClean(ui);

    // And back from the job: its page names the event.
    await ui.byTestId('delivery-link').click();
    await ui.byTestId('delivery-event').click();
    await ui.page.waitForURL(new RegExp(`#/events/${eventId}$`));
    await ui.byTestId('event-facts').waitFor();
    expect(ui.problems).toEqual([]);
  });

  it('starts from a cursor: what came after it, then live; the position shown starts there again', async () => {
    await ui.collection('eh_cursor', [{ name: 'title', type: 'text' }]);
    const token = await ui.token();
    const before = await head();
    const a = await create(token, 'eh_cursor', 'a');
    const b = await create(token, 'eh_cursor', 'b');

    await ui.goto('#/events?collection=eh_cursor');
    await live();
    expect(await eventRows().count()).toBe(0);
    await ui.byTestId('events-start').selectOption('cursor');
    await ui.byTestId('events-after').fill(before);
    await ui.byTestId('events-apply').click();
    await expect.poll(shownRecords, stream).toEqual([b, a]);
    await live();
    const c = await create(token, 'eh_cursor', 'c');
    await expect.poll(shownRecords, stream).toEqual([c, b, a]);
    // The position after the newest row: from it, only what comes later.
    const position = (await ui.byTestId('events-cursor').getAttribute('title'))!;
    const d = await create(token, 'eh_cursor', 'd');
    await expect.poll(shownRecords, stream).toEqual([d, c, b, a]);
    await ui.screenshots('events-from-cursor');
    await expectClean(ui);
    await ui.goto(`#/events?collection=eh_cursor&after=${encodeURIComponent(position)}`);
    await expect.poll(shownRecords, stream).toEqual([d]);
    expect(await ui.byTestId('events-start').inputValue()).toBe('cursor');

    // Pause and resume as before: nothing committed meanwhile is lost.
    await live();
    await ui.byTestId('events-pause').click();
    expect(await ui.byTestId('events-status').textContent()).toBe('paused');
    const e = await create(token, 'eh_cursor', 'e');
    expect(await shownRecords()).toEqual([d]);
    await ui.byTestId('events-pause').click();
    await expect.poll(shownRecords, stream).toEqual([e, d]);
    expect(ui.problems).toEqual([]);
  });

  it('starts from a time: the first events at or after it, then live', async () => {
    await ui.collection('eh_time', [{ name: 'title', type: 'text' }]);
    const token = await ui.token();
    const early = await create(token, 'eh_time', 'early');
    const feed = (await ui.admin('GET', '/admin/v1/events?collection=eh_time')).json.items;
    // From just after the first event's time, to the millisecond (the address carries it; the input is to the minute).
    const since = new Date(Date.parse(feed[0].occurredAt) + 1).toISOString();
    const late = await create(token, 'eh_time', 'late');
    await ui.goto(`#/events?collection=eh_time&since=${encodeURIComponent(since)}`);
    await expect.poll(shownRecords, stream).toEqual([late]);
    await live();
    const later = await create(token, 'eh_time', 'later');
    await expect.poll(shownRecords, stream).toEqual([later, late]);
    expect(await ui.byTestId('events-start').inputValue()).toBe('time');

    // Through the form: a time two minutes back takes all three.
    await ui.byTestId('events-start').selectOption('time');
    const d = new Date(Date.now() - 120_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    await ui.byTestId('events-since').fill(`${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`);
    await ui.byTestId('events-apply').click();
    await expect.poll(shownRecords, stream).toEqual([later, late, early]);
    await ui.screenshots('events-from-time');
    expect(await ui.axe()).toEqual([]);

    // A time still to come: nothing yet, said plainly.
    await ui.goto(`#/events?collection=eh_time&since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    await ui.byTestId('events-empty').waitFor();
    expect(await ui.byTestId('events-empty').textContent()).toMatch(/^No events match these filters since .* yet\./);
    expect(ui.problems).toEqual([]);
  });

  it('pauses itself once 200 rows from the past are shown, and resumes after them', async () => {
    await ui.collection('eh_many', [{ name: 'title', type: 'text' }]);
    const token = await ui.token();
    const before = await head();
    // 205 events in three batches (one transaction each: their feed order is the operations' order).
    const ids: string[] = [];
    for (const [from, to] of [[0, 100], [100, 200], [200, 205]] as const) {
      const operations = Array.from({ length: to - from }, (_, i) => ({ method: 'POST', collection: 'eh_many', data: { title: `n${from + i}` } }));
      const res = await ui.api(token, 'POST', '/batch', { operations });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      ids.push(...res.json.results.map((r: { record: { id: string } }) => r.record.id));
    }
    await ui.goto(`#/events?collection=eh_many&after=${encodeURIComponent(before)}`);
    await ui.byTestId('events-paused-full').waitFor({ timeout: 15_000 });
    expect(await ui.byTestId('events-status').textContent()).toBe('paused');
    expect(await eventRows().count()).toBe(200);
    expect((await shownRecords())[0]).toBe(ids[199]);
    expect((await shownRecords())[199]).toBe(ids[0]);
    await ui.screenshots('events-paused-full');
    expect(await ui.axe()).toEqual([]);
    await ui.byTestId('events-pause').click();
    await expect.poll(async () => (await shownRecords())[0], stream).toBe(ids[204]);
    expect(await eventRows().count()).toBe(200);
    expect((await shownRecords())[199]).toBe(ids[5]);
    expect(ui.problems).toEqual([]);
  }, 60_000);

  it('says so when there is nothing to show', async () => {
    await ui.collection('eh_empty', [{ name: 'title', type: 'text' }]);
    await ui.goto('#/events?collection=eh_empty');
    await live();
    expect(await ui.byTestId('events-empty').textContent()).toBe('No events match these filters yet. New ones appear here as they commit.');
    expect(await ui.byTestId('events-table').isVisible()).toBe(false);
    await ui.screenshots('events-empty');
    await expectClean(ui);
    const token = await ui.token();
    const first = await create(token, 'eh_empty', 'first');
    await expect.poll(shownRecords, stream).toEqual([first]);
    expect(await ui.byTestId('events-empty').isVisible()).toBe(false);
    expect(ui.problems).toEqual([]);
  });
});
