/**
 * Hash routing (#/webhooks/wh_…): the server only has to serve index.html at /admin/, and a reload
 * or a shared link never reaches the server with a path it does not know.
 */
export interface PageContext {
  params: Record<string, string>;
  query: URLSearchParams;
  /** Runs when the user leaves the page: stop timers, drop listeners. */
  onCleanup(fn: () => void): void;
  /** False once the user has moved on; late answers must not draw on a page no longer shown. */
  alive(): boolean;
}

export type Page = (ctx: PageContext) => HTMLElement;

interface Route {
  pattern: RegExp;
  keys: string[];
  page: Page;
  nav: string;
}

const routes: Route[] = [];

/** `path` like "/webhooks/:id"; `nav` names the navigation entry to highlight. */
export function route(path: string, nav: string, page: Page): void {
  const keys: string[] = [];
  const source = path.replace(/:([a-zA-Z]+)/g, (_, key: string) => {
    keys.push(key);
    return '([^/]+)';
  });
  routes.push({ pattern: new RegExp(`^${source}$`), keys, page, nav });
}

export interface Match {
  page: Page;
  params: Record<string, string>;
  query: URLSearchParams;
  nav: string;
  path: string;
}

export function currentHash(): string {
  const hash = location.hash.replace(/^#/, '');
  return hash.startsWith('/') ? hash : '/';
}

export function match(hash: string): Match | null {
  const [path = '/', qs = ''] = hash.split('?', 2);
  for (const r of routes) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    r.keys.forEach((key, i) => {
      params[key] = decodeURIComponent(m[i + 1] ?? '');
    });
    return { page: r.page, params, query: new URLSearchParams(qs), nav: r.nav, path };
  }
  return null;
}

export function navigate(hash: string): void {
  const target = hash.startsWith('#') ? hash : `#${hash}`;
  if (location.hash === target) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = target;
}

/** Builds "#/path?a=b" from parts, leaving empty values out. */
export function href(path: string, query: Record<string, string | null | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) params.set(k, v);
  const qs = params.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}
