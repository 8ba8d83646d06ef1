/**
 * One record, created or edited through the admin session (`#/collections/<name>/records/new` and
 * `…/records/rec_…`). Every write names the version it was made from (`If-Match: "<version>"`), so an edit made
 * while someone else changed the record is refused (412) instead of silently undoing their change; the admin then
 * reloads or overwrites (ui/record-conflict.ts). A save sends only the fields the admin changed.
 */
import { api, ApiError, request, seg } from '../api.js';
import { h, replace, time } from '../dom.js';
import { navigate, type PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { applyFieldErrors, bannerSlot, clearFieldErrors, errorBanner, notice } from '../ui/feedback.js';
import { busy, button } from '../ui/form.js';
import { conflictPanel } from '../ui/record-conflict.js';
import { fieldInput, type FieldInput } from '../ui/record-fields.js';
import type { Collection, RecordItem } from '../types.js';
import { card, loading, pageHeader } from './common.js';
import { leaveRecordsNote } from './records-browser.js';

/** Record ids as the server makes them (`rec_` and a ULID); anything else is not looked up. */
const RECORD_ID = /^rec_[0-9A-Za-z]{1,64}$/;

/** A notice for the record page about to be drawn ("Record created."), shown once. */
let flash: { id: string; text: string } | null = null;

const recordsPath = (name: string): string => `/collections/${seg(name)}/records`;
const ifMatch = (version: number) => ({ 'If-Match': `"${version}"` });

/** The record as it is now (`GET /admin/v1/collections/{name}/records/{id}`), or null when it does not exist. */
export async function readRecord(collection: string, id: string): Promise<RecordItem | null> {
  if (!RECORD_ID.test(id)) return null;
  try {
    return await api.get<RecordItem>(`${recordsPath(collection)}/${seg(id)}`);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') return null;
    throw err;
  }
}

export function recordPage(ctx: PageContext): HTMLElement {
  const name = ctx.params.name ?? '';
  const id = ctx.params.id === 'new' ? null : (ctx.params.id ?? '');
  const banner = bannerSlot();
  const body = h('div', { class: 'stack-lg' }, loading());
  const title = h('span', { testid: 'record-title' }, id ? h('code', null, id) : 'New record');
  const subtitle = h('span', { testid: 'record-subtitle' }, id ? '' : `A new record of ${name}.`);
  const deleteBtn = id ? button('Delete record', { class: 'btn btn-danger', testid: 'delete-record' }) : null;
  if (flash && flash.id === id) banner.show(notice(flash.text, 'record-notice'));
  flash = null;

  void (async () => {
    try {
      const [collection, record] = await Promise.all([
        api.get<Collection>(`/collections/${seg(name)}`),
        id ? readRecord(name, id) : Promise.resolve(null),
      ]);
      if (!ctx.alive()) return;
      if (id && !record) {
        deleteBtn?.remove();
        replace(body, h('p', { class: 'empty', testid: 'record-missing' }, `No record ${id} in ${name}: it may have been deleted. `,
          h('a', { href: `#/collections/${encodeURIComponent(name)}` }, 'Back to the records')));
        return;
      }
      replace(body, editor({ ctx, collection, record, banner, subtitle, deleteBtn }));
    } catch (err) {
      if (ctx.alive()) replace(body, errorBanner(err));
    }
  })();

  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/collections' }, 'Collections'), ' / ',
      h('a', { href: `#/collections/${encodeURIComponent(name)}`, testid: 'record-collection-link' }, name), ' / '),
    pageHeader(title, { testid: 'record-heading', subtitle, actions: deleteBtn ? [deleteBtn] : [] }),
    banner,
    body);
}

interface EditorOptions {
  ctx: PageContext;
  collection: Collection;
  record: RecordItem | null;
  banner: ReturnType<typeof bannerSlot>;
  subtitle: HTMLElement;
  deleteBtn: HTMLButtonElement | null;
}

function editor(opts: EditorOptions): HTMLElement {
  const { collection, banner } = opts;
  let loaded = opts.record;
  let inputs: FieldInput[] = [];
  const conflict = h('div', { class: 'record-conflict-slot' });
  const facts = h('dl', { class: 'facts', testid: 'record-facts' });
  const list = h('div', { class: 'stack record-fields' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'record-submit' }, loaded ? 'Save changes' : 'Create record');
  const form = h('form', { class: 'stack', id: 'record-form', testid: 'record-form', novalidate: true },
    list,
    h('div', { class: 'actions' },
      h('a', { href: `#/collections/${encodeURIComponent(collection.name)}`, class: 'btn btn-ghost', testid: 'record-cancel' }, loaded ? 'Back to records' : 'Cancel'),
      submit));

  const draw = () => {
    inputs = collection.fields.map((f) => fieldInput(f, loaded?.data[f.name]));
    replace(list, inputs.length ? inputs.map((i) => i.element)
      : h('p', { class: 'empty' }, 'This collection has no fields: a record holds its id and times only.'));
    if (!loaded) return;
    replace(opts.subtitle, `Version ${loaded.version} · updated `, time(loaded.updatedAt));
    replace(facts,
      h('dt', null, 'ID'), h('dd', null, h('code', { testid: 'record-id' }, loaded.id)),
      h('dt', null, 'Version'), h('dd', { testid: 'record-version' }, String(loaded.version)),
      h('dt', null, 'Created'), h('dd', null, time(loaded.createdAt)),
      h('dt', null, 'Updated'), h('dd', null, time(loaded.updatedAt)));
  };
  draw();

  /** The body of the write: every filled field for a create, the changed ones for an edit; null when a value cannot be sent. */
  const collect = (): Record<string, unknown> | null => {
    const data: Record<string, unknown> = {};
    const faults: { path: string; message: string }[] = [];
    for (const input of inputs) {
      const reading = input.read();
      const before = loaded?.data[input.field.name];
      const path = input.control.getAttribute('data-path') ?? '';
      if (reading.kind === 'invalid') faults.push({ path, message: reading.message });
      else if (reading.kind === 'empty' && before !== undefined) data[input.field.name] = null;
      else if (reading.kind === 'value' && JSON.stringify(reading.value) !== JSON.stringify(before)) data[input.field.name] = reading.value;
    }
    if (faults.length === 0) return data;
    // Shaped like the server's own answer, so the browser's faults land at the fields the same way.
    const problem = new ApiError(422, {
      type: 'about:blank', title: 'Check the highlighted fields', status: 422, code: 'validation_failed', requestId: '',
      detail: 'Some values cannot be sent as they are.', errors: faults,
    });
    banner.show(errorBanner(problem, applyFieldErrors(form, problem)));
    return null;
  };

  const written = (record: RecordItem, text: string) => {
    loaded = record;
    replace(conflict);
    draw();
    banner.show(notice(text, 'record-notice'));
  };

  const save = async (data: Record<string, unknown>, version?: number) => {
    banner.show(null);
    replace(conflict);
    clearFieldErrors(form);
    try {
      if (!loaded) {
        const created = await busy(form, () => request<RecordItem>('POST', recordsPath(collection.name), { body: { data } }));
        flash = { id: created.id, text: `Record created (version ${created.version}).` };
        navigate(`/collections/${encodeURIComponent(collection.name)}/records/${encodeURIComponent(created.id)}`);
        return;
      }
      const from = loaded;
      const record = await busy(form, () => request<RecordItem>('PATCH', `${recordsPath(collection.name)}/${seg(from.id)}`,
        { body: { data }, headers: ifMatch(version ?? from.version) }));
      if (opts.ctx.alive()) written(record, record.version === from.version ? 'Nothing changed: the record is as it was.' : `Saved: version ${record.version}.`);
    } catch (err) {
      if (!opts.ctx.alive()) return;
      if (err instanceof ApiError && err.code === 'precondition_failed' && loaded) await showConflict('save', data);
      else banner.show(errorBanner(err, applyFieldErrors(form, err)));
    }
  };

  const remove = async (version: number) => {
    const from = loaded!;
    banner.show(null);
    replace(conflict);
    try {
      await request<void>('DELETE', `${recordsPath(collection.name)}/${seg(from.id)}`, { headers: ifMatch(version) });
      leaveRecordsNote(collection.name, `Record ${from.id} deleted.`);
      navigate(`/collections/${encodeURIComponent(collection.name)}`);
    } catch (err) {
      if (!opts.ctx.alive()) return;
      if (err instanceof ApiError && err.code === 'precondition_failed') await showConflict('delete', {});
      else banner.show(errorBanner(err));
    }
  };

  /** The 412 explained: what changed meanwhile, then reload (drop the edits) or go ahead over the newer version. */
  const showConflict = async (action: 'save' | 'delete', data: Record<string, unknown>) => {
    const mine = loaded!;
    let current: RecordItem | null;
    try {
      current = await readRecord(collection.name, mine.id);
    } catch (err) {
      banner.show(errorBanner(err));
      return;
    }
    if (!opts.ctx.alive()) return;
    if (!current) {
      banner.show(errorBanner(new Error(`Record ${mine.id} was deleted by someone else while you were editing it.`)));
      return;
    }
    const latest = current;
    replace(conflict, conflictPanel({
      action, mine, current: latest, fields: collection.fields.map((f) => f.name), edited: Object.keys(data),
      onReload: () => written(latest, `Reloaded version ${latest.version}; your unsaved changes were dropped.`),
      onOverwrite: () => (action === 'save' ? save(data, latest.version) : remove(latest.version)),
    }));
    conflict.querySelector<HTMLElement>('h2')?.focus();
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = collect();
    if (!data) return;
    if (loaded && Object.keys(data).length === 0) {
      banner.show(notice('Nothing to save: no field was changed.', 'record-notice'));
      return;
    }
    void save(data);
  });
  opts.deleteBtn?.addEventListener('click', async () => {
    const ok = await confirmDialog({
      title: 'Delete record?',
      message: h('p', null, 'Delete ', h('code', null, loaded!.id), ` (version ${loaded!.version}) from `, h('strong', null, collection.name),
        '? Subscribed webhooks receive record.deleted. This cannot be undone.'),
      confirmLabel: 'Delete record', danger: true,
    });
    if (ok) await remove(loaded!.version);
  });

  return h('div', { class: 'stack-lg' },
    conflict,
    card('Fields', form),
    loaded ? card('Record', facts) : null);
}
