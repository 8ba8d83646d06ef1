/**
 * The webhook target form, for creating and editing. Topics are typed as the seed's comma-separated
 * list and sent as an array; a refused destination is shown under the URL field with the reason.
 * Collections and changed fields are comma-separated too; left empty they are sent as null (all / any change).
 * The receiver settings (SPEC §13) are sent on create, and on edit only those that changed: a new algorithm
 * makes a new secret or key pair, and saved headers go back only when retyped (ui/headers-editor.ts).
 * The Kind select (SPEC §14) offers HTTPS and each broker kind SVC_BROKERS configures (GET /admin/v1/brokers); a
 * broker kind replaces the URL by a broker of that kind and the kind's address fields (ui: destinationFields).
 */
import { api, ApiError, discovery } from '../api.js';
import { h, replace } from '../dom.js';
import { RATE_PER_SECOND_MAX, TARGET_TYPE_LABELS, type Answer, type Broker, type BrokerKind, type Collection, type Page, type SignatureAlgorithm, type SignatureScheme, type TargetType, type Webhook } from '../types.js';
import { dropDraft, isResuming, keepDraft, restoreDraft } from './drafts.js';
import { applyFieldErrors, bannerSlot, clearFieldErrors, errorBanner } from './feedback.js';
import { busy, field, select, textInput } from './form.js';
import { headersEditor } from './headers-editor.js';
import { caretEcho } from './filter-caret.js';
import { localDevHint } from './local-dev-hint.js';

/** What the form sends of a target's destination: its type and that type's fields only (the server refuses others). */
export type DestinationInput =
  | { type: 'https'; url: string }
  | { type: 'nats'; broker: string; subject: string }
  | { type: 'rabbitmq'; broker: string; exchange: string; routingKey: string | null }
  | { type: 'redis'; broker: string; stream: string; maxLength: number | null };

export type WebhookInput = DestinationInput & WebhookSettings;

interface WebhookSettings {
  name: string;
  topics: string[];
  enabled: boolean;
  collections: string[] | null;
  changedFields: string[] | null;
  /** SPEC §9: a query (docs/queries.md) over the record; null: none. */
  filter: string | null;
  ordering: 'none' | 'record';
  signatureScheme?: SignatureScheme;
  signatureAlgorithm?: SignatureAlgorithm;
  headers?: Record<string, string> | null;
  rateLimit?: { perSecond: number } | null;
}

interface Options {
  initial?: Webhook;
  draftKey: string;
  submitLabel: string;
  onSubmit: (input: WebhookInput) => Promise<void>;
}

export function parseTopics(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(',')) {
    const topic = part.trim();
    if (topic) seen.add(topic);
  }
  return [...seen];
}

/** A comma-separated list, or null when it names nothing. */
export function parseListOrNull(text: string): string[] | null {
  const list = parseTopics(text);
  return list.length > 0 ? list : null;
}

export function webhookForm(opts: Options): HTMLFormElement {
  const banner = bannerSlot();
  const init = opts.initial;
  const name = textInput({ required: true, maxlength: '200', testid: 'webhook-name', value: init?.name ?? '', placeholder: 'Orders service' });
  const url = h('input', { type: 'url', required: true, autocomplete: 'off', spellcheck: 'false', testid: 'webhook-url', value: init?.url ?? '', placeholder: 'https://example.com/hooks/svc' });
  const urlField = field({ label: 'URL', id: 'webhook-url', path: '/url', hint: 'A public https:// address. Private, loopback and other non-public destinations are refused.' }, url);
  const destination = destinationFields(init, url, urlField);
  const topics = textInput({ required: true, testid: 'webhook-topics', value: init ? init.topics.join(', ') : 'record.created, record.updated', placeholder: 'record.created, record.updated' });
  const collections = textInput({ testid: 'webhook-collections', value: init?.collections?.join(', ') ?? '', placeholder: 'all collections' });
  const changedFields = textInput({ testid: 'webhook-changed-fields', value: init?.changedFields?.join(', ') ?? '', placeholder: 'any change' });
  const filter = textInput({ class: 'mono', testid: 'webhook-filter', value: init?.filter ?? '', placeholder: "status = 'open' && priority >= 3" });
  const ordering = select(
    [{ value: 'none', label: 'None — deliveries may overtake each other' }, { value: 'record', label: 'Per record — one at a time, oldest version first' }],
    { id: 'webhook-ordering', 'data-path': '/ordering', testid: 'webhook-ordering', value: init?.ordering ?? 'none' },
  );
  const receiver = receiverFields(init);
  const enabled = h('input', { type: 'checkbox', id: 'webhook-enabled', 'data-path': '/enabled', checked: init ? init.enabled : true, testid: 'webhook-enabled' });
  const form = h('form', { class: 'stack', id: 'webhook-form', testid: 'webhook-form', novalidate: true },
    banner,
    field({ label: 'Name', id: 'webhook-name', path: '/name' }, name),
    destination.kindField,
    urlField,
    destination.brokerFields,
    field({ label: 'Topics', id: 'webhook-topics', path: '/topics', hint: 'Comma-separated, or check them above.' }, topics),
    field({ label: 'Collections', id: 'webhook-collections', path: '/collections', hint: 'Comma-separated, or check them above; only record events of these collections. Empty: all.' }, collections),
    field({ label: 'Changed fields', id: 'webhook-changed-fields', path: '/changedFields', hint: 'Comma-separated; a record.updated only when one of these fields changed. Empty: any change.' }, changedFields),
    field({
      label: 'Filter', id: 'webhook-filter', path: '/filter',
      hint: 'Only record events whose record matches, in the records browser’s query language; needs Collections (it is checked against their fields). An update matches if the record before or after it does. Empty: no filter.',
    }, filter),
    field({ label: 'Ordering', id: 'webhook-ordering', path: '/ordering' }, ordering),
    receiver.element,
    h('div', { class: 'check' }, enabled, h('label', { for: 'webhook-enabled' }, 'Enabled'),
      h('span', { class: 'hint inline' }, ' — a disabled target is saved without a DNS check and receives nothing.')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'webhook-submit' }, opts.submitLabel)));

  if (init && !isResuming()) dropDraft(opts.draftKey);
  restoreDraft(form, opts.draftKey);
  receiver.sync();
  destination.sync();
  keepDraft(form, opts.draftKey);
  topics.after(choices(topics, 'Pick topics', serverTopics));
  collections.after(choices(collections, 'Pick collections', collectionNames));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    // The last try's faults (field errors, the filter's caret, the local-development hint) go as this one starts: a
    // save that succeeds said "saved" under a caret still pointing at the filter it replaced.
    clearFieldErrors(form);
    const input: WebhookInput = {
      ...destination.input(),
      name: name.value.trim(),
      topics: parseTopics(topics.value),
      enabled: enabled.checked,
      collections: parseListOrNull(collections.value),
      changedFields: parseListOrNull(changedFields.value),
      filter: filter.value.trim() || null,
      ordering: ordering.value === 'record' ? 'record' : 'none',
      ...receiver.input(),
    };
    try {
      await busy(form, () => opts.onSubmit(input));
      dropDraft(opts.draftKey);
    } catch (err) {
      // A 409 on a scheme change (an old-format secret must be rotated first) names no field: it is the scheme's.
      const implied = err instanceof ApiError && err.code === 'conflict' && input.signatureScheme !== undefined
        ? [{ path: '/signatureScheme', message: err.problem.detail }] : [];
      banner.show(errorBanner(err, applyFieldErrors(form, err, implied)));
      const fault = err instanceof ApiError ? err.problem.errors?.find((e) => e.path === '/filter' && typeof e.position === 'number') : undefined;
      if (fault) filter.closest('.field')?.append(caretEcho(input.filter ?? '', fault.position!));
      const hint = input.type === 'https' ? localDevHint(err, input.url) : null;
      if (hint) url.closest('.field')?.append(hint);
    }
  });
  return form;
}

const PLACEHOLDERS = '{collection} and {topic} are replaced per event (record.created → record.created).';

/**
 * Kind, broker and the kind's address fields. The broker list arrives after the form is drawn, so Kind and Broker
 * are not kept in drafts (a restored value would name an option not there yet); the address fields are. A target
 * being edited keeps its own kind and broker on offer even if SVC_BROKERS no longer names them: the server judges.
 */
function destinationFields(init: Webhook | undefined, url: HTMLInputElement, urlField: HTMLElement) {
  const kind = select([], { testid: 'webhook-kind', 'data-no-draft': true });
  const broker = select([], { testid: 'webhook-broker', 'data-no-draft': true });
  const text = (testid: string, value: string | null | undefined, placeholder: string) =>
    textInput({ class: 'mono', testid, value: value ?? '', placeholder });
  const subject = text('webhook-subject', init?.subject, 'svc.{collection}.{topic}');
  const exchange = text('webhook-exchange', init?.exchange, 'svc-events');
  const routingKey = text('webhook-routing-key', init?.routingKey, '{collection}.{topic}');
  const stream = text('webhook-stream', init?.stream, 'svc:{collection}');
  const maxLength = h('input', {
    type: 'number', min: '1', step: '1', inputmode: 'numeric', testid: 'webhook-max-length', value: init?.maxLength == null ? '' : String(init.maxLength), placeholder: 'Never trimmed',
  });
  const addressOf: Record<BrokerKind, HTMLElement> = {
    nats: field({ label: 'Subject', id: 'webhook-subject', path: '/subject', hint: `The JetStream subject published to; a stream must capture it. ${PLACEHOLDERS}` }, subject),
    rabbitmq: h('div', { class: 'stack' },
      field({ label: 'Exchange', id: 'webhook-exchange', path: '/exchange', hint: 'An exchange that exists; empty: the default exchange, which routes by queue name. No placeholders.' }, exchange),
      field({ label: 'Routing key', id: 'webhook-routing-key', path: '/routingKey', hint: `${PLACEHOLDERS} Empty: none.` }, routingKey)),
    redis: h('div', { class: 'stack' },
      field({ label: 'Stream', id: 'webhook-stream', path: '/stream', hint: `The stream key XADD appends to. ${PLACEHOLDERS}` }, stream),
      field({ label: 'Max length', id: 'webhook-max-length', path: '/maxLength', hint: 'Trimmed to about this many entries (MAXLEN ~). Empty: never trimmed.' }, maxLength)),
  };
  const brokerFields = h('div', { class: 'stack', testid: 'webhook-broker-fields' },
    field({ label: 'Broker', id: 'webhook-broker', path: '/broker', hint: 'One SVC_BROKERS names; its address and credentials stay in the server’s environment.' }, broker),
    addressOf.nats, addressOf.rabbitmq, addressOf.redis);
  let brokers: Broker[] = [];

  const sync = () => {
    const type = kind.value as TargetType;
    const isHttps = type === 'https';
    urlField.hidden = !isHttps;
    url.required = isHttps;
    brokerFields.hidden = isHttps;
    for (const k of Object.keys(addressOf) as BrokerKind[]) addressOf[k].hidden = k !== type;
    subject.required = type === 'nats';
    stream.required = type === 'redis';
    broker.required = !isHttps;
    if (isHttps) return;
    const names = brokers.filter((b) => b.kind === type).map((b) => b.name);
    if (init?.type === type && init.broker !== null && !names.includes(init.broker)) names.unshift(init.broker);
    const chosen = broker.value || (init?.type === type ? init.broker : null);
    replace(broker, names.map((n) => h('option', { value: n }, n)));
    if (chosen !== null && names.includes(chosen)) broker.value = chosen;
  };
  kind.addEventListener('change', () => {
    broker.value = '';
    sync();
  });

  const offer = (list: Broker[]) => {
    brokers = list;
    const kinds = (['nats', 'rabbitmq', 'redis'] as const).filter((k) => init?.type === k || list.some((b) => b.kind === k));
    const current = kind.value || init?.type || 'https';
    replace(kind, (['https', ...kinds] as TargetType[]).map((k) => h('option', { value: k }, TARGET_TYPE_LABELS[k])));
    kind.value = current;
    sync();
  };
  offer([]);
  api.get<Answer<'/admin/v1/brokers', 'get'>>('/brokers').then((page) => offer(page.items), () => {
    // Without the list, HTTPS and the target's own kind stay on offer: nothing is lost, only the other kinds.
  });

  const input = (): DestinationInput => {
    const type = kind.value as TargetType;
    switch (type) {
      case 'nats': return { type, broker: broker.value, subject: subject.value.trim() };
      case 'rabbitmq': return { type, broker: broker.value, exchange: exchange.value.trim(), routingKey: routingKey.value.trim() || null };
      case 'redis': return { type, broker: broker.value, stream: stream.value.trim(), maxLength: maxLength.value === '' ? null : Number(maxLength.value) };
      default: return { type: 'https', url: url.value.trim() };
    }
  };
  return { kindField: field({ label: 'Kind', id: 'webhook-kind', path: '/type', hint: 'HTTPS, or a message broker the operator configured (SVC_BROKERS).' }, kind), brokerFields, sync, input };
}

const SCHEMES: { value: SignatureScheme; label: string }[] = [
  { value: 'svc', label: 'svc — Svc-Delivery, Svc-Timestamp, Svc-Signature' },
  { value: 'standard', label: 'Standard Webhooks — webhook-id, webhook-timestamp, webhook-signature' },
  { value: 'both', label: 'Both — all six headers' },
];
const ALGORITHMS: { value: SignatureAlgorithm; label: string }[] = [
  { value: 'hmac-sha256', label: 'HMAC-SHA256 — a shared secret' },
  { value: 'ed25519', label: 'Ed25519 — a key pair; receivers verify with the public key' },
];

/** Signing scheme and algorithm, headers and rate limit: the receiver's side of a target. */
function receiverFields(init: Webhook | undefined) {
  const scheme = select(SCHEMES, { testid: 'webhook-scheme', value: init?.signatureScheme ?? 'svc' });
  const algorithm = select(ALGORITHMS, { testid: 'webhook-algorithm', value: init?.signatureAlgorithm ?? 'hmac-sha256' });
  const headers = headersEditor(init?.headers ?? null, init !== undefined);
  const rate = h('input', {
    type: 'number', min: '1', max: String(RATE_PER_SECOND_MAX), step: '1', inputmode: 'numeric', testid: 'webhook-rate-limit',
    value: init?.rateLimit ? String(init.rateLimit.perSecond) : '', placeholder: 'No limit',
  });
  // SPEC §13: ed25519 goes with the Standard Webhooks scheme only; any other scheme signs with HMAC.
  const sync = () => {
    algorithm.disabled = scheme.value !== 'standard';
    if (algorithm.disabled) algorithm.value = 'hmac-sha256';
  };
  scheme.addEventListener('change', sync);
  sync();

  const element = h('fieldset', { class: 'fieldset stack', testid: 'webhook-receiver' },
    h('legend', null, 'Receiver'),
    field({ label: 'Signature scheme', id: 'webhook-scheme', path: '/signatureScheme', hint: 'Standard Webhooks: any of its libraries verifies the deliveries with the secret (or public key) as shown.' }, scheme),
    field({
      label: 'Signature algorithm', id: 'webhook-algorithm', path: '/signatureAlgorithm',
      hint: `Ed25519 only with Standard Webhooks.${init ? ' A change makes a new secret or key pair, shown once after saving.' : ''}`,
    }, algorithm),
    headers.element,
    field({ label: 'Rate limit (attempts per second)', id: 'webhook-rate-limit', path: '/rateLimit', hint: `1 … ${RATE_PER_SECOND_MAX}, across every svc process. Empty: no limit.` }, rate));

  const input = (): Partial<WebhookSettings> => {
    const out: Partial<WebhookSettings> = {
      signatureScheme: scheme.value as SignatureScheme,
      signatureAlgorithm: algorithm.value as SignatureAlgorithm,
      rateLimit: rate.value === '' ? null : { perSecond: Number(rate.value) },
    };
    const sentHeaders = headers.value();
    if (sentHeaders !== undefined) out.headers = sentHeaders;
    if (init) {
      if (out.signatureScheme === init.signatureScheme) delete out.signatureScheme;
      if (out.signatureAlgorithm === init.signatureAlgorithm) delete out.signatureAlgorithm;
      if ((out.rateLimit?.perSecond ?? null) === (init.rateLimit?.perSecond ?? null)) delete out.rateLimit;
    }
    return out;
  };
  return { element, sync, input };
}

/**
 * The seed's form takes topics as a comma-separated list, and so does this one; below the text, the server's own lists
 * (the topics of /api/v1/capabilities, the collections that exist) are boxes that add or remove a name there, and
 * follow what is typed. A name the lists lack (a deleted collection) stays in the text and is the server's to judge.
 */
function choices(input: HTMLInputElement, label: string, load: () => Promise<string[]>): HTMLElement {
  const group = h('div', { class: 'choice-list', role: 'group', 'aria-label': label, testid: `${input.getAttribute('data-testid') ?? ''}-choices` },
    h('span', { class: 'muted small' }, 'Loading…'));
  let boxes: HTMLInputElement[] = [];
  const sync = () => {
    const chosen = new Set(parseTopics(input.value));
    for (const b of boxes) b.checked = chosen.has(b.value);
  };
  const toggle = (box: HTMLInputElement) => {
    const list = parseTopics(input.value).filter((n) => n !== box.value);
    input.value = (box.checked ? [...list, box.value] : list).join(', ');
    // As if typed: the draft keeps it, and the boxes stay in step.
    input.dispatchEvent(new Event('input', { bubbles: true }));
  };
  input.addEventListener('input', sync);
  load().then((names) => {
    // Not in drafts: the boxes are drawn from the text, which is.
    boxes = names.map((n) => h('input', { type: 'checkbox', id: `${input.id}-${n.replace(/[^a-z0-9_]/gi, '-')}`, value: n, testid: `${input.id}-choice-${n}`, 'data-no-draft': true }));
    for (const b of boxes) b.addEventListener('change', () => toggle(b));
    replace(group, boxes.map((b) => h('div', { class: 'check' }, b, h('label', { for: b.id, class: 'mono' }, b.value))));
    sync();
  }, (err: unknown) => {
    replace(group, h('span', { class: 'muted small' }, `No list to pick from (${err instanceof Error ? err.message : String(err)}): type the names.`));
  });
  return group;
}

const serverTopics = async (): Promise<string[]> => (await discovery<{ topics: string[] }>('/capabilities')).topics;

/** Every collection's name, page by page (500 a page: the list's maximum). */
async function collectionNames(): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Collection> = await api.get<Page<Collection>>('/collections', { limit: 500, cursor });
    names.push(...page.items.map((c) => c.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}
