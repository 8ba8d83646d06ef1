/**
 * The webhook target form, for creating and editing. Topics are typed as the seed's comma-separated
 * list and sent as an array; a refused destination is shown under the URL field with the reason.
 * Collections and changed fields are comma-separated too; left empty they are sent as null (all / any change).
 */
import { h } from '../dom.js';
import { TOPICS, type Webhook } from '../types.js';
import { dropDraft, isResuming, keepDraft, restoreDraft } from './drafts.js';
import { applyFieldErrors, bannerSlot, errorBanner } from './feedback.js';
import { busy, field, select, textInput } from './form.js';

export interface WebhookInput {
  name: string;
  url: string;
  topics: string[];
  enabled: boolean;
  collections: string[] | null;
  changedFields: string[] | null;
  ordering: 'none' | 'record';
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
  const ordering = select(
    [{ value: 'none', label: 'None — deliveries may overtake each other' }, { value: 'record', label: 'Per record — one at a time, oldest version first' }],
    { id: 'webhook-ordering', 'data-path': '/ordering', testid: 'webhook-ordering', value: init?.ordering ?? 'none' },
  );
  const enabled = h('input', { type: 'checkbox', id: 'webhook-enabled', 'data-path': '/enabled', checked: init ? init.enabled : true, testid: 'webhook-enabled' });
  const form = h('form', { class: 'stack', id: 'webhook-form', testid: 'webhook-form', novalidate: true },
    banner,
    field({ label: 'Name', id: 'webhook-name', path: '/name' }, name),
    field({ label: 'URL', id: 'webhook-url', path: '/url', hint: 'A public https:// address. Private, loopback and other non-public destinations are refused.' }, url),
    field({ label: 'Topics', id: 'webhook-topics', path: '/topics', hint: `Comma-separated. Available: ${TOPICS.join(', ')}.` }, topics),
    field({ label: 'Collections', id: 'webhook-collections', path: '/collections', hint: 'Comma-separated; only record events of these collections. Empty: all.' }, collections),
    field({ label: 'Changed fields', id: 'webhook-changed-fields', path: '/changedFields', hint: 'Comma-separated; a record.updated only when one of these fields changed. Empty: any change.' }, changedFields),
    field({ label: 'Ordering', id: 'webhook-ordering', path: '/ordering' }, ordering),
    h('div', { class: 'check' }, enabled, h('label', { for: 'webhook-enabled' }, 'Enabled'),
      h('span', { class: 'hint inline' }, ' — a disabled target is saved without a DNS check and receives nothing.')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'webhook-submit' }, opts.submitLabel)));

  if (init && !isResuming()) dropDraft(opts.draftKey);
  restoreDraft(form, opts.draftKey);
  keepDraft(form, opts.draftKey);

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
      ordering: ordering.value === 'record' ? 'record' : 'none',
    };
    try {
      await busy(form, () => opts.onSubmit(input));
      dropDraft(opts.draftKey);
    } catch (err) {
      banner.show(errorBanner(err, applyFieldErrors(form, err)));
    }
  });
  return form;
}
