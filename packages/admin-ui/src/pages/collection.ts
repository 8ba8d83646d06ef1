import { api, ApiError, seg } from '../api.js';
import { h, replace } from '../dom.js';
import { navigate, type PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { applyFieldErrors, bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { busy, button } from '../ui/form.js';
import { fieldList } from '../ui/field-list.js';
import { recordsCard } from './records-browser.js';
import { MAX_INDEXED, indexedToggle } from '../ui/indexed-toggle.js';
import type { Collection, Field } from '../types.js';
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

/** The field list, with "required" editable, "indexed" switched at once, and new fields appended; PATCH sends the whole list. */
function schemaCard(collection: Collection, pageBanner: ReturnType<typeof bannerSlot>, reload: () => Promise<void>): HTMLElement {
  const banner = bannerSlot();
  const existing = collection.fields.map((f, i) => {
    const required = h('input', { type: 'checkbox', id: `field-required-${i}`, checked: f.required, 'data-path': `/fields/${i}/required`, testid: `field-required-${i}` });
    return { field: f, required, row: h('tr', { testid: 'field-row' },
      h('td', null, h('code', null, f.name)),
      h('td', null, badge(f.type, 'neutral')),
      h('td', null, h('div', { class: 'check' }, required, h('label', { for: required.id }, h('span', { class: 'visually-hidden' }, `${f.name} `), 'required'))),
      h('td', null, indexedToggle(f, i, (indexed) => saveIndexed(i, indexed), (err) => banner.show(errorBanner(err, applyFieldErrors(form, err)))))) };
  });
  // Only this field's flag changes; the others go as saved, so unsaved "required" edits stay in the form.
  // One PATCH at a time: each sends the whole list, built from what the one before it saved.
  let saving: Promise<unknown> = Promise.resolve();
  const saveIndexed = (index: number, indexed: boolean): Promise<void> => {
    const run = saving.then(async () => {
      banner.show(null);
      const fields = existing.map((e, j) => ({ ...e.field, indexed: j === index ? indexed : e.field.indexed === true }));
      const updated = await api.patch<Collection>(`/collections/${seg(collection.name)}`, { fields });
      for (const e of existing) e.field.indexed = updated.fields.find((u) => u.name === e.field.name)?.indexed === true;
    });
    saving = run.catch(() => undefined);
    return run;
  };
  const added = fieldList('nf', {
    initialRows: 0, pathBase: () => existing.length, legend: 'Add fields',
    hint: 'New fields are appended. A field\'s type never changes once created.',
  });
  const form = h('form', { class: 'stack', id: 'schema-form', testid: 'schema-form', novalidate: true },
    banner,
    table(['Field', 'Type', 'Required', 'Indexed'], existing.map((e) => e.row), { testid: 'fields-table', caption: 'Fields', empty: 'This collection has no fields yet.' }),
    existing.length > 0 && h('p', { class: 'hint' },
      `An indexed field has a database index for filters and sorts; switching it saves at once. At most ${MAX_INDEXED} per collection, never json fields.`),
    added.element,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'schema-submit' }, 'Save fields')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    banner.show(null);
    await saving;
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
