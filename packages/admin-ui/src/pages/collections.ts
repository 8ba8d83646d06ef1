import { api } from '../api.js';
import { h, replace, time } from '../dom.js';
import { href, navigate, type PageContext } from '../router.js';
import { applyFieldErrors, bannerSlot, errorBanner } from '../ui/feedback.js';
import { busy, field, textInput } from '../ui/form.js';
import { draftRowCount, fieldList } from '../ui/field-list.js';
import { dropDraft, keepDraft, readDraft, restoreDraft } from '../ui/drafts.js';
import { pager } from '../ui/pager.js';
import type { Collection, Page } from '../types.js';
import { card, loading, pageHeader, table } from './common.js';

const DRAFT = 'collection-create';

export function collectionsPage(ctx: PageContext): HTMLElement {
  const listBanner = bannerSlot();
  const list = h('div', { class: 'list' }, loading());
  const paging = pager(() => void load(), 'collections-pager');

  const load = async () => {
    try {
      const page = await api.get<Page<Collection>>('/collections', { limit: 50, cursor: paging.cursor });
      if (!ctx.alive()) return;
      paging.loaded(page.nextCursor, page.items.length);
      replace(list, table(['Name', 'Fields', 'Created'], page.items.map((c) =>
        h('tr', { testid: 'collection-row', 'data-name': c.name },
          h('td', null, h('a', { href: href(`/collections/${encodeURIComponent(c.name)}`), class: 'strong', testid: 'collection-link' }, c.name)),
          h('td', null, fieldSummary(c)),
          h('td', null, time(c.createdAt)))),
      { testid: 'collections-table', caption: 'Collections', empty: 'No collections yet. Create one below.' }));
    } catch (err) {
      if (ctx.alive()) listBanner.show(errorBanner(err));
    }
  };
  void load();

  return h('div', { class: 'page' },
    pageHeader('Collections', { subtitle: 'Named sets of records, each with a typed field list.' }),
    card('All collections', listBanner, list, paging.element),
    createForm());
}

function fieldSummary(c: Collection): HTMLElement {
  if (c.fields.length === 0) return h('span', { class: 'muted' }, 'no fields');
  return h('span', { class: 'chips' }, c.fields.map((f) =>
    h('span', { class: 'chip' }, f.name, h('span', { class: 'chip-type' }, `${f.type}${f.required ? ' *' : ''}`))));
}

function createForm(): HTMLElement {
  const banner = bannerSlot();
  const draft = readDraft(DRAFT);
  const name = textInput({ required: true, pattern: '[a-z][a-z0-9_]{0,62}', testid: 'collection-name', placeholder: 'issues' });
  const fields = fieldList('cf', { initialRows: Math.max(1, draftRowCount(draft, 'cf')) });
  const form = h('form', { class: 'stack', id: 'collection-form', testid: 'collection-form', novalidate: true },
    banner,
    field({
      label: 'Collection name', id: 'collection-name', path: '/name',
      hint: 'Lower-case letters, digits and _, starting with a letter (at most 63 characters).',
    }, name),
    fields.element,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'collection-submit' }, 'Create collection')));
  restoreDraft(form, DRAFT);
  keepDraft(form, DRAFT);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    try {
      const created = await busy(form, () => api.post<Collection>('/collections', { name: name.value.trim(), fields: fields.values() }));
      dropDraft(DRAFT);
      navigate(`/collections/${encodeURIComponent(created.name)}`);
    } catch (err) {
      banner.show(errorBanner(err, applyFieldErrors(form, err)));
    }
  });
  return card('New collection', form);
}
