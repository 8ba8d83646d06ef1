/**
 * The webhook target form, for creating and editing. Topics are typed as the seed's comma-separated
 * list and sent as an array; a refused destination is shown under the URL field with the reason.
 * Collections and changed fields are comma-separated too; left empty they are sent as null (all / any change).
 * The receiver settings (SPEC §13) are sent on create, and on edit only those that changed: a new algorithm
 * makes a new secret or key pair, and saved headers go back only when retyped (ui/headers-editor.ts).
 */
import { api, ApiError, discovery } from '../api.js';
import { h, replace } from '../dom.js';
import { RATE_PER_SECOND_MAX, type Collection, type Page, type SignatureAlgorithm, type SignatureScheme, type Webhook } from '../types.js';
import { dropDraft, isResuming, keepDraft, restoreDraft } from './drafts.js';
import { applyFieldErrors, bannerSlot, errorBanner } from './feedback.js';
import { busy, field, select, textInput } from './form.js';
import { headersEditor } from './headers-editor.js';
import { caretEcho } from './filter-caret.js';
import { localDevHint } from './local-dev-hint.js';

export interface WebhookInput {
  name: string;
  url: string;
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
    field({ label: 'URL', id: 'webhook-url', path: '/url', hint: 'A public https:// address. Private, loopback and other non-public destinations are refused.' }, url),
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
  keepDraft(form, opts.draftKey);
  topics.after(choices(topics, 'Pick topics', serverTopics));
  collections.after(choices(collections, 'Pick collections', collectionNames));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    const input: WebhookInput = {
      name: name.value.trim(),
      url: url.value.trim(),
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
      const hint = localDevHint(err, input.url);
      if (hint) url.closest('.field')?.append(hint);
    }
  });
  return form;
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

  const input = (): Partial<WebhookInput> => {
    const out: Partial<WebhookInput> = {
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
