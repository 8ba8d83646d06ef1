/** Entry point: restores the session, draws the shell and routes between pages. */
import { api, ApiError, request, session, setUnauthorizedHandler } from './api.js';
import { h, replace } from './dom.js';
import { healthPage } from './pages/health.js';
import { loginPage } from './pages/login.js';
import { setupPage } from './pages/setup.js';
import { collectionsPage } from './pages/collections.js';
import { collectionPage } from './pages/collection.js';
import { schemaPage } from './pages/schema.js';
import { tokensPage } from './pages/tokens.js';
import { webhooksPage } from './pages/webhooks.js';
import { webhookNewPage, webhookPage } from './pages/webhook.js';
import { deliveriesPage } from './pages/deliveries.js';
import { deliveryPage } from './pages/delivery.js';
import { eventsPage } from './pages/events.js';
import { eventPage } from './pages/events-detail.js';
import { recordPage } from './pages/record-page.js';
import { adminsPage } from './pages/admins.js';
import { accountPage } from './pages/account.js';
import { currentHash, match, navigate, route, type PageContext } from './router.js';
import { errorBanner } from './ui/feedback.js';
import { endResume, markResume } from './ui/drafts.js';
import type { SessionInfo } from './types.js';

const RETURN_KEY = 'svc-admin-return';
const HOME = '/collections';

route('/collections', 'collections', collectionsPage);
route('/collections/:name', 'collections', collectionPage);
route('/collections/:name/records/:id', 'collections', recordPage);
route('/admins', 'admins', adminsPage);
route('/account', 'account', accountPage);
route('/schema', 'schema', schemaPage);
route('/tokens', 'tokens', tokensPage);
route('/webhooks', 'webhooks', webhooksPage);
route('/health', 'webhooks', healthPage);
route('/webhooks/new', 'webhooks', webhookNewPage);
route('/webhooks/:id', 'webhooks', webhookPage);
route('/deliveries', 'deliveries', deliveriesPage);
route('/deliveries/:id', 'deliveries', deliveryPage);
route('/events', 'events', eventsPage);
route('/events/:id', 'events', eventPage);

const NAV = [
  { key: 'collections', label: 'Collections', hash: '#/collections' },
  { key: 'tokens', label: 'API tokens', hash: '#/tokens' },
  { key: 'webhooks', label: 'Webhooks', hash: '#/webhooks' },
  { key: 'deliveries', label: 'Deliveries', hash: '#/deliveries' },
  { key: 'events', label: 'Events', hash: '#/events' },
  { key: 'schema', label: 'API schema', hash: '#/schema' },
  { key: 'admins', label: 'Admins', hash: '#/admins' },
];

const root = document.getElementById('app') as HTMLElement;
let cleanups: (() => void)[] = [];
let generation = 0;
let loginMessage: string | null = null;

function leavePage(): void {
  generation += 1;
  for (const fn of cleanups.splice(0)) {
    try {
      fn();
    } catch {
      // A failing cleanup must not block navigation.
    }
  }
}

function shell(active: string, content: HTMLElement): HTMLElement {
  const logout = h('button', { type: 'button', class: 'btn btn-ghost', testid: 'logout', id: 'logout' }, 'Log out');
  logout.addEventListener('click', async () => {
    logout.disabled = true;
    try {
      await api.del('/session');
    } catch {
      // Already gone on the server: logging out locally is what the user asked for.
    }
    session.csrfToken = null;
    session.email = null;
    sessionStorage.removeItem(RETURN_KEY);
    loginMessage = 'You are logged out.';
    navigate('/login');
  });
  return h('div', { class: 'layout' },
    h('a', { class: 'skip-link', href: '#main' }, 'Skip to content'),
    h('header', { class: 'topbar' },
      h('a', { class: 'brand', href: '#/collections', testid: 'brand' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, 's'), 'svc admin'),
      h('nav', { class: 'mainnav', 'aria-label': 'Main' },
        NAV.map((item) => h('a', {
          href: item.hash, testid: `nav-${item.key}`, class: item.key === active ? 'active' : undefined,
          'aria-current': item.key === active ? 'page' : undefined,
        }, item.label))),
      h('div', { class: 'account' },
        // The signed-in admin's own page (change password); the testid stays: tests wait on it as "the shell is drawn".
        h('a', {
          class: 'account-email', testid: 'account-email', href: '#/account', title: 'Your account: change password',
          'aria-current': active === 'account' ? 'page' : undefined,
        }, session.email ?? ''),
        logout)),
    h('main', { id: 'main', class: 'content', tabindex: '-1' }, content));
}

function render(): void {
  leavePage();
  const myGeneration = generation;
  const hash = currentHash();

  if (hash === '/login' || !session.csrfToken) {
    if (hash !== '/login') sessionStorage.setItem(RETURN_KEY, hash);
    if (hash !== '/login') {
      history.replaceState(null, '', '#/login');
    }
    const message = loginMessage;
    loginMessage = null;
    replace(root, loginPage({ message, onLoggedIn: afterLogin }));
    return;
  }

  const m = match(hash);
  if (!m) {
    navigate(HOME);
    return;
  }
  const ctx: PageContext = {
    params: m.params,
    query: m.query,
    onCleanup: (fn) => cleanups.push(fn),
    alive: () => generation === myGeneration,
  };
  let content: HTMLElement;
  try {
    content = m.page(ctx);
  } catch (err) {
    content = errorBanner(err);
  }
  endResume();
  replace(root, shell(m.nav, content));
  // Move focus to the new page's heading so keyboard and screen-reader users land on it.
  const heading = root.querySelector<HTMLElement>('main h1');
  if (heading) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
  window.scrollTo(0, 0);
}

function afterLogin(info: SessionInfo): void {
  session.csrfToken = info.csrfToken;
  session.email = info.admin.email;
  const back = sessionStorage.getItem(RETURN_KEY);
  sessionStorage.removeItem(RETURN_KEY);
  navigate(back && back !== '/login' && back !== '/' ? back : HOME);
}

setUnauthorizedHandler(() => {
  const hash = currentHash();
  if (hash !== '/login') sessionStorage.setItem(RETURN_KEY, hash);
  session.csrfToken = null;
  markResume();
  loginMessage = 'Your session has ended. Log in again to continue — unsaved form entries are kept.';
  // Let the failing call's own error handling finish before the page is replaced.
  setTimeout(() => navigate('/login'), 0);
});

async function boot(): Promise<void> {
  // The one-time setup link is a real path (/admin/setup?token=…), not a hash route.
  const path = location.pathname.replace(/\/+$/, '');
  if (path.endsWith('/setup')) {
    const token = new URLSearchParams(location.search).get('token') ?? '';
    replace(root, setupPage({
      token,
      onDone: (info) => {
        // Drop the token from the address bar and history, then continue in the app.
        history.replaceState(null, '', `/admin/#${HOME}`);
        afterLogin(info);
        window.addEventListener('hashchange', render);
        render();
      },
    }));
    return;
  }
  if (path !== '/admin' && path.startsWith('/admin/')) {
    // Any other deep path the server answered with index.html: settle on the canonical address.
    history.replaceState(null, '', `/admin/${location.hash}`);
  }
  try {
    const info = await request<SessionInfo>('GET', '/session', { anonymous: true });
    session.csrfToken = info.csrfToken;
    session.email = info.admin.email;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 401) {
      loginMessage = err instanceof ApiError ? `Could not check the session: ${err.problem.detail}` : null;
    }
  }
  window.addEventListener('hashchange', render);
  render();
}

void boot();
