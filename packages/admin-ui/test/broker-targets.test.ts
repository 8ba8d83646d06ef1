/**
 * Broker targets in the admin UI (SPEC §14 item 5, issue 26): the form's Kind select offers NATS JetStream when
 * SVC_BROKERS configures a NATS broker, swaps the URL for a broker and a subject, shows the server's refusal at the
 * subject, and saves; the target page and the list show kind, broker and address; a record write is delivered into
 * a JetStream stream this test makes and deletes. Skipped without SVC_TEST_NATS_URL, as the server's broker tests.
 */
import { randomBytes } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectClean, provoked } from './ui-checks.js';
import { hasChromium, useUi } from './harness.js';

const NATS_URL = process.env.SVC_TEST_NATS_URL ?? '';

describe.skipIf(!hasChromium || !NATS_URL)('broker targets in the admin UI', () => {
  const ui = useUi({ SVC_BROKERS: `local-nats=${NATS_URL}` });
  // Unique per run: JetStream refuses a stream whose subjects overlap another's, and other tests share the server.
  const suffix = randomBytes(4).toString('hex');
  const collection = `bt_${suffix}`;
  const stream = `SVCUI_${suffix.toUpperCase()}`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    nc = await natsConnect({ servers: new URL(NATS_URL).host });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`svc-ui-test.${collection}`] });
  });
  afterAll(async () => {
    await jsm?.streams.delete(stream).catch(() => {});
    await nc?.close();
  });

  it('creates a NATS target through the form, shows it on its page and in the list, and delivers a record write into the stream', async () => {
    await ui.collection(collection, [{ name: 'title', type: 'text' }]);
    const brokers = await ui.admin('GET', '/admin/v1/brokers');
    expect(brokers.json).toEqual({ items: [{ name: 'local-nats', kind: 'nats' }] });

    await ui.goto('#/webhooks/new');
    // Only kinds with a configured broker besides HTTPS: no RabbitMQ or Redis here.
    await expect.poll(async () => ui.byTestId('webhook-kind').locator('option').allTextContents()).toEqual(['HTTPS', 'NATS JetStream']);
    expect(await ui.byTestId('webhook-url').isVisible()).toBe(true);
    await ui.byTestId('webhook-kind').selectOption('nats');
    expect(await ui.byTestId('webhook-url').isVisible()).toBe(false);
    expect(await ui.byTestId('webhook-exchange').isVisible()).toBe(false);
    expect(await ui.byTestId('webhook-broker').locator('option').allTextContents()).toEqual(['local-nats']);
    await ui.byTestId('webhook-name').fill('Orders into NATS');
    await ui.byTestId('webhook-topics').fill('record.created');
    await ui.byTestId('webhook-collections').fill(collection);

    // The server's refusal at its field, as for any other.
    await ui.byTestId('webhook-subject').fill('svc-ui-test.{colection}');
    await ui.byTestId('webhook-submit').click();
    await ui.byTestId('error-subject').waitFor();
    expect(await ui.byTestId('error-subject').textContent()).toContain('{colection} is not a placeholder');
    expect(await ui.byTestId('webhook-subject').getAttribute('aria-invalid')).toBe('true');
    await expectClean(ui);

    await ui.byTestId('webhook-subject').fill('svc-ui-test.{collection}');
    await ui.byTestId('webhook-submit').click();
    await ui.byTestId('subscription-facts').waitFor();
    expect(await ui.byTestId('subscription-kind').textContent()).toBe('NATS JetStream');
    expect(await ui.byTestId('subscription-broker').textContent()).toBe('local-nats');
    expect(await ui.byTestId('subscription-address').textContent()).toBe('subject svc-ui-test.{collection}');
    expect(await ui.byTestId('subscription-url').count()).toBe(0);
    // The edit form below starts on the target's own kind and broker.
    expect(await ui.byTestId('webhook-kind').inputValue()).toBe('nats');
    expect(await ui.byTestId('webhook-broker').inputValue()).toBe('local-nats');
    expect(await ui.byTestId('webhook-subject').inputValue()).toBe('svc-ui-test.{collection}');
    await ui.screenshots('broker-target-page');
    await expectClean(ui);
    const id = decodeURIComponent(new URL(ui.page.url()).hash.replace('#/webhooks/', ''));
    const saved = await ui.admin('GET', `/admin/v1/webhooks/${id}`);
    expect(saved.json).toMatchObject({ type: 'nats', broker: 'local-nats', subject: 'svc-ui-test.{collection}', url: null, collections: [collection] });

    await ui.goto('#/webhooks');
    const row = ui.page.locator(`[data-testid="webhook-row"][data-id="${id}"]`);
    expect(await row.getByTestId('webhook-address').textContent()).toBe('nats:local-nats → svc-ui-test.{collection}');
    await expectClean(ui);

    const token = await ui.token();
    const created = await ui.api(token, 'POST', `/collections/${collection}/records`, { data: { title: 'one' } });
    expect(created.status).toBe(201);
    await expect.poll(async () => (await ui.admin('GET', `/admin/v1/deliveries?webhookId=${id}`)).json.items.map((j: { state: string; recordId: string }) => [j.state, j.recordId]),
      { timeout: 15_000 }).toEqual([['delivered', created.json.id]]);
    const info = await jsm.streams.info(stream);
    expect(info.state.messages).toBe(1);
    const message = await jsm.streams.getMessage(stream, { seq: info.state.first_seq });
    expect(message!.subject).toBe(`svc-ui-test.${collection}`);
    expect(message!.string()).toContain(created.json.id);

    expect(provoked(ui, 422)).toBe(1);
    expect(ui.problems).toEqual([]);
  });
});
