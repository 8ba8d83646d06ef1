import { api, ApiError, seg } from '../api.js';
import { h, replace, time } from '../dom.js';
import { navigate, type PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { applyFieldErrors, bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { busy, button } from '../ui/form.js';
import { fieldList } from '../ui/field-list.js';
import { pager } from '../ui/pager.js';
import type { Collection, Field, Page, RecordItem } from '../types.js';
import { badge, card, loading, pageHeader, table } from './common.js';

export function collectionPage(ctx: PageContext): HTMLElement {
  const name = ctx.params.name ?? '';
  const banner = bannerSlot();
  const body = h('div', { class: 'stack-lg' }, loading());
  const deleteBtn = button('Delete collection', { class: 'btn btn-danger', testid: 'delete-collection', id: 'delete-collection' });
  deleteBtn.addEventListener('click', () => void deleteCollection(name, banner));

  const load = async () => {
    try {
      const collection = await api.get<Collection>(`/collections/${seg(name)}`);
      if (!ctx.alive()) return;
      replace(body, schemaCard(collection, banner, load), recordsCard(ctx, collection));
    } catch (err) {
      if (ctx.alive()) replace(body, errorBanner(err));
    }
  };
  void load();

  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/collections' }, 'Collections'), ' / '),
    pageHeader(name, { testid: 'collection-title', subtitle: 'Fields and records of this collection.', actions: [deleteBtn] }),
    banner,
    body);
}

/** The field list, with "required" editable and new fields appended; PATCH sends the whole list. */
function schemaCard(collection: Collection, pageBanner: ReturnType<typeof bannerSlot>, reload: () => Promise<void>): HTMLElement {
  const banner = bannerSlot();
  const existing = collection.fields.map((f, i) => {
    const required = h('input', { type: 'checkbox', id: `field-required-${i}`, checked: f.required, 'data-path': `/fields/${i}/required`, testid: `field-required-${i}` });
    return { field: f, required, row: h('tr', { testid: 'field-row' },
      h('td', null, h('code', null, f.name)),
      h('td', null, badge(f.type, 'neutral')),
      h('td', null, h('div', { class: 'check' }, required, h('label', { for: required.id }, h('span', { class: 'visually-hidden' }, `${f.name} `), 'required')))) };
  });
  const added = fieldList('nf', {
    initialRows: 0, pathBase: () => existing.length, legend: 'Add fields',
    hint: 'New fields are appended. A field\'s type never changes once created.',
  });
  const form = h('form', { class: 'stack', id: 'schema-form', testid: 'schema-form', novalidate: true },
    banner,
    table(['Field', 'Type', 'Required'], existing.map((e) => e.row), { testid: 'fields-table', caption: 'Fields', empty: 'This collection has no fields yet.' }),
    added.element,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'schema-submit' }, 'Save fields')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    const fields: Field[] = [
      ...existing.map((e) => ({ ...e.field, required: e.required.checked })),
      ...added.values(),
    ];
    try {
      await busy(form, () => api.patch(`/collections/${seg(collection.name)}`, { fields }));
      pageBanner.show(notice('Fields saved.', 'schema-saved'));
      await reload();
    } catch (err) {
      banner.show(errorBanner(err, applyFieldErrors(form, err)));
    }
  });
  return card('Fields', form);
}

function recordsCard(ctx: PageContext, collection: Collection): HTMLElement {
  const list = h('div', null, loading());
  const paging = pager(() => void load(), 'records-pager');
  const columns = collection.fields.map((f) => f.name);
  const load = async () => {
    try {
      const page = await api.get<Page<RecordItem>>(`/collections/${seg(collection.name)}/records`, { limit: 20, cursor: paging.cursor });
      if (!ctx.alive()) return;
      paging.loaded(page.nextCursor, page.items.length);
      replace(list, table(['ID', 'Version', 'Updated', ...columns], page.items.map((r) =>
        h('tr', { testid: 'record-row', 'data-id': r.id },
          h('td', null, h('code', { class: 'nowrap' }, r.id)),
          h('td', null, String(r.version)),
          h('td', null, time(r.updatedAt)),
          columns.map((c) => h('td', { class: 'cell-value' }, showValue(r.data[c]))))),
      { testid: 'records-table', caption: `Records of ${collection.name}`, empty: 'No records yet. Records are written through the public API.' }));
    } catch (err) {
      if (ctx.alive()) replace(list, errorBanner(err));
    }
  };
  void load();
  return card('Records', list, paging.element);
}

function showValue(value: unknown): HTMLElement | string {
  if (value === undefined || value === null) return h('span', { class: 'muted' }, '—');
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? h('span', { title: text }, `${text.slice(0, 117)}…`) : text;
}

async function deleteCollection(name: string, banner: ReturnType<typeof bannerSlot>): Promise<void> {
  const ok = await confirmDialog({
    title: 'Delete collection?',
    message: h('p', null, 'Delete the collection ', h('strong', null, name), '? This cannot be undone.'),
    confirmLabel: 'Delete', danger: true,
  });
  if (!ok) return;
  try {
    await api.del(`/collections/${seg(name)}`);
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 'conflict')) {
      banner.show(errorBanner(err));
      return;
    }
    const force = await confirmDialog({
      title: 'The collection still holds records',
      message: h('p', null, 'Delete ', h('strong', null, name), ' together with all of its records? They cannot be recovered.'),
      confirmLabel: 'Delete with all records', danger: true,
    });
    if (!force) return;
    try {
      await api.del(`/collections/${seg(name)}`, { force: 'true' });
    } catch (err2) {
      banner.show(errorBanner(err2));
      return;
    }
  }
  navigate('/collections');
}
