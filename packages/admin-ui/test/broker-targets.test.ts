/**
 * Broker targets in the admin UI (SPEC §14 item 5, issue 26), one kind at a time against the real broker: the form's
 * Kind select offers the kind when SVC_BROKERS configures a broker of it, swaps the URL for a broker and the kind's
 * address fields, shows the server's refusal at its field, and saves; the target page and the list show kind, broker
 * and address; a record write arrives in the broker, read with the broker's own client, carrying the delivery id as
 * its de-duplication key. axe clean and nothing wider than 390 px at each step. Each kind has its own server and names
 * (a JetStream stream, a RabbitMQ exchange and queue, a Redis key prefix) that are removed afterwards; a kind is
 * skipped without its SVC_TEST_* URL, as the server's broker tests are.
 */
import { describe, expect, it } from 'vitest';
import { BROKER_URLS, uniqueName, useAmqpChannel, useNatsStream, useRedisClient } from '../../server/test/helpers/broker-rig.js';
import { expectClean, provoked } from './ui-checks.js';
import { hasChromium, useUi, type Ui } from './harness.js';

/** What one broker holds after the write: the message's routing, its de-duplication key and its body. */
interface Arrived {
  /** The subject, routing key or stream key it went to. */
  to: string;
  /** Nats-Msg-Id, message_id or the entry's `id` field. */
  dedupeKey: string;
  body: string;
}

interface BrokerCase {
  kind: 'nats' | 'rabbitmq' | 'redis';
  label: string;
  url: string;
  /** The broker's own names for this run; `arrived` reads what the record write put there (null: nothing yet). */
  names(collection: string): {
    /** Fills the kind's address fields with a mistake the server refuses at `refusal.field`. */
    fillWrong(ui: Ui): Promise<void>;
    refusal: { field: string; input: string; message: string };
    fillRight(ui: Ui): Promise<void>;
    saved: Record<string, unknown>;
    /** The Subscription card's address line, and the list's. */
    address: string;
    listed: string;
    /** Where the write's message must arrive. */
    to: string;
    arrived(): Promise<Arrived | null>;
  };
}

const NATS: BrokerCase = {
  kind: 'nats',
  label: 'NATS JetStream',
  url: BROKER_URLS.nats,
  names(collection) {
    const prefix = uniqueName('svcui');
    // The stream captures `<prefix>.>`: the subject's first token is this run's own.
    const stream = prefix.toUpperCase();
    const js = useNatsStream(stream, prefix);
    return {
      fillWrong: (ui) => ui.byTestId('webhook-subject').fill(`${prefix}.{colection}`),
      refusal: { field: 'subject', input: 'webhook-subject', message: '{colection} is not a placeholder' },
      fillRight: (ui) => ui.byTestId('webhook-subject').fill(`${prefix}.{collection}`),
      saved: { subject: `${prefix}.{collection}` },
      address: `subject ${prefix}.{collection}`,
      listed: `nats:local-nats → ${prefix}.{collection}`,
      to: `${prefix}.${collection}`,
      async arrived() {
        const info = await js.jsm.streams.info(stream);
        if (info.state.messages === 0) return null;
        expect(info.state.messages).toBe(1);
        const m = await js.jsm.streams.getMessage(stream, { seq: info.state.first_seq });
        return { to: m!.subject, dedupeKey: m!.header?.get('Nats-Msg-Id') ?? '', body: m!.string() };
      },
    };
  },
};

const RABBITMQ: BrokerCase = {
  kind: 'rabbitmq',
  label: 'RabbitMQ',
  url: BROKER_URLS.amqp,
  names(collection) {
    const exchange = uniqueName('svcui-ex-');
    const queue = uniqueName('svcui-q-');
    const routingKey = `svcui.${collection}`;
    const mq = useAmqpChannel({ exchanges: [exchange], queues: [queue] }, async (ch) => {
      await ch.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
      await ch.assertQueue(queue, { durable: false });
      await ch.bindQueue(queue, exchange, routingKey);
    });
    return {
      // A space is outside RabbitMQ's alphabet for exchange names.
      fillWrong: async (ui) => {
        await ui.byTestId('webhook-exchange').fill(`${exchange} events`);
        await ui.byTestId('webhook-routing-key').fill('svcui.{collection}');
      },
      refusal: { field: 'exchange', input: 'webhook-exchange', message: 'must be at most 255 of A-Z, a-z, 0-9, -, _, . and :' },
      fillRight: (ui) => ui.byTestId('webhook-exchange').fill(exchange),
      saved: { exchange, routingKey: 'svcui.{collection}' },
      address: `exchange ${exchange}, routing key svcui.{collection}`,
      listed: `rabbitmq:local-rabbitmq → ${exchange} / svcui.{collection}`,
      to: routingKey,
      async arrived() {
        const m = await mq.ch.get(queue, { noAck: true });
        if (m === false) return null;
        expect(await mq.ch.get(queue, { noAck: true })).toBe(false);
        return { to: m.fields.routingKey, dedupeKey: String(m.properties.messageId), body: m.content.toString('utf8') };
      },
    };
  },
};

const REDIS: BrokerCase = {
  kind: 'redis',
  label: 'Redis Streams',
  url: BROKER_URLS.redis,
  names(collection) {
    const prefix = `${uniqueName('svcui')}:`;
    const cache = useRedisClient(prefix);
    const key = `${prefix}${collection}`;
    return {
      fillWrong: async (ui) => {
        await ui.byTestId('webhook-stream').fill(`${prefix}{colection}`);
        await ui.byTestId('webhook-max-length').fill('100');
      },
      refusal: { field: 'stream', input: 'webhook-stream', message: '{colection} is not a placeholder' },
      fillRight: (ui) => ui.byTestId('webhook-stream').fill(`${prefix}{collection}`),
      saved: { stream: `${prefix}{collection}`, maxLength: 100 },
      address: `stream ${prefix}{collection}, trimmed to ~100`,
      listed: `redis:local-redis → ${prefix}{collection} (~100)`,
      to: key,
      async arrived() {
        const keys = await cache.redis.keys(`${prefix}*`);
        if (keys.length === 0) return null;
        expect(keys).toEqual([key]);
        const entries = await cache.redis.xRange(key, '-', '+');
        expect(entries).toHaveLength(1);
        const { message } = entries[0]!;
        return { to: key, dedupeKey: message.id ?? '', body: message.body ?? '' };
      },
    };
  },
};

for (const c of [NATS, RABBITMQ, REDIS]) {
  describe.skipIf(!hasChromium || !c.url)(`${c.label} targets in the admin UI`, () => {
    const broker = `local-${c.kind}`;
    const ui = useUi({ SVC_BROKERS: `${broker}=${c.url}` });
    const collection = uniqueName('bt_');
    const names = c.names(collection);

    it(`creates a ${c.label} target through the form, shows it on its page and in the list, and delivers a record write into the broker`, async () => {
      await ui.collection(collection, [{ name: 'title', type: 'text' }]);
      const brokers = await ui.admin('GET', '/admin/v1/brokers');
      expect(brokers.json).toEqual({ items: [{ name: broker, kind: c.kind }] });

      await ui.goto('#/webhooks/new');
      // Only kinds with a configured broker besides HTTPS.
      await expect.poll(async () => ui.byTestId('webhook-kind').locator('option').allTextContents()).toEqual(['HTTPS', c.label]);
      expect(await ui.byTestId('webhook-url').isVisible()).toBe(true);
      await ui.byTestId('webhook-kind').selectOption(c.kind);
      expect(await ui.byTestId('webhook-url').isVisible()).toBe(false);
      const own = { nats: ['webhook-subject'], rabbitmq: ['webhook-exchange', 'webhook-routing-key'], redis: ['webhook-stream', 'webhook-max-length'] };
      for (const [kind, fields] of Object.entries(own)) {
        for (const testid of fields) expect(await ui.byTestId(testid).isVisible(), `${testid} with kind ${c.kind}`).toBe(kind === c.kind);
      }
      expect(await ui.byTestId('webhook-broker').locator('option').allTextContents()).toEqual([broker]);
      await ui.byTestId('webhook-name').fill(`Orders into ${c.label}`);
      await ui.byTestId('webhook-topics').fill('record.created');
      await ui.byTestId('webhook-collections').fill(collection);
      await expectClean(ui);

      // The server's refusal at its field, as for any other.
      await names.fillWrong(ui);
      await ui.byTestId('webhook-submit').click();
      const error = ui.byTestId(`error-${names.refusal.field}`);
      await error.waitFor();
      expect(await error.textContent()).toContain(names.refusal.message);
      expect(await ui.byTestId(names.refusal.input).getAttribute('aria-invalid')).toBe('true');
      await expectClean(ui);

      await names.fillRight(ui);
      await ui.byTestId('webhook-submit').click();
      await ui.byTestId('subscription-facts').waitFor();
      expect(await ui.byTestId('subscription-kind').textContent()).toBe(c.label);
      expect(await ui.byTestId('subscription-broker').textContent()).toBe(broker);
      expect(await ui.byTestId('subscription-address').textContent()).toBe(names.address);
      expect(await ui.byTestId('subscription-url').count()).toBe(0);
      // The edit form below starts on the target's own kind and broker.
      expect(await ui.byTestId('webhook-kind').inputValue()).toBe(c.kind);
      expect(await ui.byTestId('webhook-broker').inputValue()).toBe(broker);
      await ui.screenshots(`broker-target-${c.kind}-page`);
      await expectClean(ui);
      const id = decodeURIComponent(new URL(ui.page.url()).hash.replace('#/webhooks/', ''));
      const saved = await ui.admin('GET', `/admin/v1/webhooks/${id}`);
      expect(saved.json).toMatchObject({ type: c.kind, broker, url: null, collections: [collection], ...names.saved });

      await ui.goto('#/webhooks');
      const row = ui.page.locator(`[data-testid="webhook-row"][data-id="${id}"]`);
      expect(await row.getByTestId('webhook-address').textContent()).toBe(names.listed);
      await expectClean(ui);

      const token = await ui.token();
      const created = await ui.api(token, 'POST', `/collections/${collection}/records`, { data: { title: 'one' } });
      expect(created.status).toBe(201);
      const jobs = async () => (await ui.admin('GET', `/admin/v1/deliveries?webhookId=${id}`)).json.items as { id: string; state: string; recordId: string }[];
      await expect.poll(async () => (await jobs()).map((j) => [j.state, j.recordId]), { timeout: 15_000 }).toEqual([['delivered', created.json.id]]);
      const [job] = await jobs();
      let arrived: Arrived | null = null;
      await expect.poll(async () => (arrived = await names.arrived()) !== null, { timeout: 5_000 }).toBe(true);
      expect(arrived!.to).toBe(names.to);
      expect(arrived!.dedupeKey).toBe(job!.id);
      expect(JSON.parse(arrived!.body)).toMatchObject({ id: job!.id, topic: 'record.created', collection, recordId: created.json.id });

      // The job's page shows the broker's attempt as any other.
      await ui.goto(`#/deliveries/${encodeURIComponent(job!.id)}`);
      await expect.poll(() => ui.byTestId('delivery-state').textContent()).toBe('delivered');
      await expectClean(ui);

      expect(provoked(ui, 422)).toBe(1);
      expect(ui.problems).toEqual([]);
    });
  });
}
