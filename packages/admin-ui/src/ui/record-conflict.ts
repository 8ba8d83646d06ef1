/**
 * A version conflict (412) made plain: the record changed after it was opened. The panel names both versions and
 * the fields that changed meanwhile, marks those the admin edited too, and offers the two ways on: take the newer
 * version (the edits are dropped) or write over it (a save sends only the edited fields, so the other change
 * survives in every field the admin left alone).
 */
import { h } from '../dom.js';
import type { RecordItem } from '../types.js';

interface ConflictOptions {
  action: 'save' | 'delete';
  /** The version the admin started from, and the one the server holds now. */
  mine: RecordItem;
  current: RecordItem;
  /** The collection's fields in their order; `edited` those the refused save changed. */
  fields: string[];
  edited: string[];
  onReload(): void;
  onOverwrite(): Promise<void>;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function conflictPanel(opts: ConflictOptions): HTMLElement {
  const { mine, current } = opts;
  const changed = opts.fields.filter((f) => !same(mine.data[f], current.data[f]));
  const both = changed.filter((f) => opts.edited.includes(f));
  const reload = h('button', { type: 'button', class: 'btn', testid: 'conflict-reload' },
    opts.action === 'save' ? 'Reload (drop my changes)' : 'Reload the record');
  const overwrite = h('button', { type: 'button', class: 'btn btn-danger', testid: 'conflict-overwrite' },
    opts.action === 'save' ? 'Overwrite with my changes' : 'Delete anyway');
  reload.addEventListener('click', () => opts.onReload());
  overwrite.addEventListener('click', () => {
    reload.disabled = true;
    overwrite.disabled = true;
    void opts.onOverwrite().finally(() => {
      reload.disabled = false;
      overwrite.disabled = false;
    });
  });
  return h('section', { class: 'conflict-panel', role: 'alert', testid: 'record-conflict', 'aria-labelledby': 'record-conflict-title' },
    h('h2', { id: 'record-conflict-title', tabindex: '-1' }, 'Someone else changed this record'),
    h('p', { testid: 'conflict-versions' },
      `You opened version ${mine.version}; it is now at version ${current.version}. `,
      opts.action === 'save' ? 'Your changes were not saved.' : 'It was not deleted.'),
    changed.length > 0
      ? h('p', { testid: 'conflict-fields' }, 'Changed meanwhile: ',
        changed.map((f, i) => [i > 0 ? ', ' : '', h('code', null, f), both.includes(f) ? ' (you changed it too)' : '']), '.')
      : h('p', { testid: 'conflict-fields' }, 'No field value differs: only the version moved on.'),
    h('p', { class: 'hint' }, opts.action === 'save'
      ? 'Overwrite saves the fields you changed over the newer version; the fields you left alone keep their new values.'
      : `Delete anyway deletes version ${current.version} as it is now.`),
    h('div', { class: 'actions actions-start' }, reload, overwrite));
}
