/**
 * What the tokens page's two kinds of token share (API tokens, `/admin/v1/tokens`; admin tokens, SPEC §16,
 * `/admin/v1/admin-tokens`): the paged list whose rows end in a remove button behind the confirmation <dialog>, the
 * scope boxes filled from the server's own schema, and the panel that shows a new token once. Each page keeps what
 * is its own: columns, wording, drafts.
 */
import { api, seg } from '../api.js';
import { h, replace, time, type Child } from '../dom.js';
import type { PageContext } from '../router.js';
import { badge, loading, table } from '../pages/common.js';
import type { Page } from '../types.js';
import { confirmDialog } from './dialog.js';
import { errorBanner, notice, type BannerSlot } from './feedback.js';
import { button } from './form.js';
import { pager } from './pager.js';
import { oneTimeSecret, type SecretOptions } from './secret.js';

/** What both lists show of a token. */
interface ListedToken {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

export interface TokenListOptions<T extends ListedToken> {
  ctx: PageContext;
  banner: BannerSlot;
  /** The admin API's list, whose `/{id}` the remove button deletes. */
  path: string;
  /** Test ids: `<prefix>-row`, `<prefix>s-table`, `<prefix>s-pager`. */
  prefix: string;
  caption: string;
  empty: string;
  /** Columns between Scopes and Created. */
  columns?: { header: string; cell: (token: T) => Child }[];
  remove: {
    label: string;
    testid: string;
    ariaLabel: (token: T) => string;
    title: string;
    message: (name: HTMLElement) => Child;
    confirmLabel: string;
    done: (token: T) => string;
  };
}

/** A token list and its pager (`parts`, for a card), one page at a time; `load()` shows the current page again. */
export function tokenList<T extends ListedToken>(opts: TokenListOptions<T>): { parts: HTMLElement[]; load(): Promise<void> } {
  const list = h('div', null, loading());
  const paging = pager(() => void load(), `${opts.prefix}s-pager`);
  const columns = opts.columns ?? [];

  const row = (t: T) => {
    const remove = button(opts.remove.label, { class: 'btn btn-small btn-danger-ghost', testid: opts.remove.testid, 'aria-label': opts.remove.ariaLabel(t) });
    remove.addEventListener('click', async () => {
      const ok = await confirmDialog({
        title: opts.remove.title,
        message: h('p', null, opts.remove.message(h('strong', null, t.name))),
        confirmLabel: opts.remove.confirmLabel,
        danger: true,
      });
      if (!ok) return;
      try {
        await api.del(`${opts.path}/${seg(t.id)}`);
        opts.banner.show(notice(opts.remove.done(t)));
        await load();
      } catch (err) {
        opts.banner.show(errorBanner(err));
      }
    });
    return h('tr', { testid: `${opts.prefix}-row`, 'data-id': t.id },
      h('td', { class: 'strong' }, t.name),
      h('td', null, h('span', { class: 'chips' }, t.scopes.map((s) => badge(s, 'neutral')))),
      columns.map((c) => h('td', null, c.cell(t))),
      h('td', null, time(t.createdAt)),
      h('td', null, t.lastUsedAt ? time(t.lastUsedAt) : h('span', { class: 'muted' }, 'never')),
      h('td', { class: 'cell-actions' }, remove));
  };

  const load = async () => {
    try {
      const page = await api.get<Page<T>>(opts.path, { limit: 50, cursor: paging.cursor });
      if (!opts.ctx.alive()) return;
      paging.loaded(page.nextCursor, page.items.length);
      const headers = ['Name', 'Scopes', ...columns.map((c) => c.header), 'Created', 'Last used', ''];
      replace(list, table(headers, page.items.map(row), { testid: `${opts.prefix}s-table`, caption: opts.caption, empty: opts.empty }));
    } catch (err) {
      if (opts.ctx.alive()) opts.banner.show(errorBanner(err));
    }
  };
  void load();
  return { parts: [list, paging.element], load };
}

/**
 * The scope boxes of a create form, once the server's scopes are known: the submit button stays disabled until then,
 * and a failure to read them goes to the form's banner.
 */
export function scopeBoxes(opts: {
  scopes: Promise<string[]>;
  /** Test ids and element ids: `<prefix>-scopes`, `<prefix>-scope-<scope, dashed>`. */
  prefix: string;
  checked: boolean;
  submit: HTMLButtonElement;
  banner: BannerSlot;
  /** After the boxes are drawn (a draft restores their state). */
  onReady?: () => void;
}): { element: HTMLElement; chosen(): string[] } {
  let boxes: HTMLInputElement[] = [];
  const checks = h('div', { class: 'inline-checks', testid: `${opts.prefix}-scopes` }, loading('Loading scopes…'));
  opts.scopes.then(
    (names) => {
      // Ids by name, not position: a draft keeps each scope's box whatever order the server lists them in.
      boxes = names.map((s) => {
        const id = `${opts.prefix}-scope-${s.replace(/[^a-z0-9]/gi, '-')}`;
        return h('input', { type: 'checkbox', id, value: s, checked: opts.checked, testid: id });
      });
      replace(checks, ...boxes.map((input) => h('div', { class: 'check' }, input, h('label', { for: input.id }, input.value))));
      opts.onReady?.();
      opts.submit.disabled = false;
    },
    (err: unknown) => {
      replace(checks);
      opts.banner.show(errorBanner(err));
    },
  );
  const element = h('fieldset', { class: 'fieldset', 'data-path': '/scopes', id: `${opts.prefix}-scopes` },
    h('legend', null, 'Scopes'),
    checks);
  return { element, chosen: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}

/** Shows a token just created, once, in `slot`, and moves the focus to its Copy button. */
export function revealToken(slot: HTMLElement, opts: SecretOptions): void {
  replace(slot, oneTimeSecret(opts));
  slot.scrollIntoView({ block: 'nearest' });
  (slot.querySelector('button') as HTMLButtonElement | null)?.focus();
}
