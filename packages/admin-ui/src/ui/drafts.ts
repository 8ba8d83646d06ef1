/**
 * Half-filled forms survive an expired session: values are kept in sessionStorage (this tab only)
 * while typing, and put back when the form is drawn again after logging in. Password fields and
 * anything marked data-no-draft are never stored.
 */
const PREFIX = 'svc-admin-draft:';

type Draft = Record<string, string | boolean>;

export function restoreDraft(form: HTMLFormElement, key: string): void {
  const raw = sessionStorage.getItem(PREFIX + key);
  if (!raw) return;
  let draft: Draft;
  try {
    draft = JSON.parse(raw) as Draft;
  } catch {
    return;
  }
  for (const el of draftable(form)) {
    const value = draft[el.id];
    if (value === undefined) continue;
    if (el instanceof HTMLInputElement && el.type === 'checkbox') el.checked = Boolean(value);
    else el.value = String(value);
  }
}

export function keepDraft(form: HTMLFormElement, key: string): void {
  const save = () => {
    const draft: Draft = {};
    for (const el of draftable(form)) {
      draft[el.id] = el instanceof HTMLInputElement && el.type === 'checkbox' ? el.checked : el.value;
    }
    try {
      sessionStorage.setItem(PREFIX + key, JSON.stringify(draft));
    } catch {
      // Storage full or disabled: drafts are a convenience only.
    }
  };
  form.addEventListener('input', save);
  form.addEventListener('change', save);
}

export function readDraft(key: string): Draft | null {
  try {
    const raw = sessionStorage.getItem(PREFIX + key);
    return raw ? (JSON.parse(raw) as Draft) : null;
  } catch {
    return null;
  }
}

export function dropDraft(key: string): void {
  sessionStorage.removeItem(PREFIX + key);
}

function draftable(form: HTMLFormElement): (HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement)[] {
  return Array.from(form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea'))
    .filter((el) => el.id && !el.hasAttribute('data-no-draft') && !(el instanceof HTMLInputElement && el.type === 'password'));
}

/*
 * Create forms always get their draft back. Edit forms only right after a login that an expired
 * session forced, so an abandoned edit from earlier does not silently reappear over fresh data.
 */
let resuming = false;
export const markResume = (): void => {
  resuming = true;
};
export const isResuming = (): boolean => resuming;
export const endResume = (): void => {
  resuming = false;
};
