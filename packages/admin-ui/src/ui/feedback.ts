/** Error banners, notices and inline field messages. */
import { ApiError } from '../api.js';
import { h, replace } from '../dom.js';

/**
 * A banner for a failed call: the server's `detail`, and the request id to quote when reporting it.
 * Field errors that no input on the page claims are listed too, so none is silently lost.
 */
export function errorBanner(err: unknown, unclaimed: { path: string; message: string }[] = []): HTMLElement {
  const problem = err instanceof ApiError ? err.problem : null;
  const detail = problem ? problem.detail : err instanceof Error ? err.message : String(err);
  return h('div', { class: 'banner banner-error', role: 'alert', testid: 'error-banner' },
    h('strong', { class: 'banner-title' }, problem?.title && problem.title !== detail ? problem.title : 'Error'),
    h('p', { class: 'banner-detail', testid: 'error-detail' }, detail),
    unclaimed.length > 0 && h('ul', { class: 'banner-list' },
      unclaimed.map((e) => h('li', null, h('code', null, e.path || '(body)'), ' ', e.message))),
    problem?.requestId && h('p', { class: 'banner-meta' },
      'Request ID: ', h('code', { testid: 'error-request-id' }, problem.requestId)),
  );
}

export function notice(text: string, testid = 'notice'): HTMLElement {
  return h('div', { class: 'banner banner-ok', role: 'status', testid }, text);
}

/** A slot that shows one banner at a time. */
export type BannerSlot = HTMLElement & { show(node: Node | null): void };

export function bannerSlot(): BannerSlot {
  const slot = h('div', { class: 'banner-slot', 'aria-live': 'polite' }) as unknown as BannerSlot;
  slot.show = (node) => {
    replace(slot, node);
    if (node instanceof HTMLElement && node.getAttribute('role') === 'alert') slot.scrollIntoView?.({ block: 'nearest' });
  };
  return slot;
}

/**
 * Puts each `errors[].path` (a JSON Pointer such as `/url` or `/fields/0/name`) beside the input that
 * carries the same `data-path`, and returns the ones no input claimed. `implied`: the field a form knows
 * an answer without a field list is about (a 409 on the one setting it changed).
 */
export function applyFieldErrors(form: HTMLElement, err: unknown, implied: { path: string; message: string }[] = []): { path: string; message: string }[] {
  clearFieldErrors(form);
  if (!(err instanceof ApiError)) return [];
  let errors = err.problem.errors ?? [];
  // A refused destination is about the URL even if the server sent no field list.
  if (errors.length === 0 && err.code === 'destination_refused') errors = [{ path: '/url', message: err.problem.detail }];
  if (errors.length === 0) errors = implied;
  const unclaimed: { path: string; message: string }[] = [];
  let first: HTMLElement | null = null;
  for (const e of errors) {
    const input = findByPath(form, e.path);
    if (!input) {
      unclaimed.push(e);
      continue;
    }
    const messageId = `${input.id}-error`;
    let message = form.querySelector<HTMLElement>(`#${CSS.escape(messageId)}`);
    if (!message) {
      message = h('p', { id: messageId, class: 'field-error', testid: `error-${testidFor(e.path)}` });
      input.closest('.field')?.appendChild(message) ?? input.after(message);
      message.textContent = e.message;
    } else {
      message.textContent = `${message.textContent} ${e.message}`;
    }
    input.setAttribute('aria-invalid', 'true');
    const described = new Set((input.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean));
    described.add(messageId);
    input.setAttribute('aria-describedby', [...described].join(' '));
    first ??= input;
  }
  first?.focus();
  return unclaimed;
}

export function clearFieldErrors(form: HTMLElement): void {
  for (const el of Array.from(form.querySelectorAll('.field-error'))) el.remove();
  for (const input of Array.from(form.querySelectorAll<HTMLElement>('[aria-invalid="true"]'))) {
    input.removeAttribute('aria-invalid');
    const rest = (input.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && !id.endsWith('-error'));
    if (rest.length) input.setAttribute('aria-describedby', rest.join(' '));
    else input.removeAttribute('aria-describedby');
  }
}

/** The closest input for a pointer: `/fields/0/name` falls back to `/fields/0`, then `/fields`. */
function findByPath(form: HTMLElement, path: string): HTMLElement | null {
  let p = path.startsWith('/') ? path : `/${path}`;
  while (p) {
    const input = form.querySelector<HTMLElement>(`[data-path="${CSS.escape(p)}"]`);
    if (input) return input;
    p = p.slice(0, p.lastIndexOf('/'));
  }
  return null;
}

const testidFor = (path: string): string => path.replace(/^\//, '').replace(/\//g, '-') || 'body';
