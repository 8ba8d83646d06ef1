/**
 * One svc server, one HTTPS receiver and one logged-in browser page per test file: what every browser test of the
 * admin UI starts from (SPEC §17, issues 24 and 28: each test its own data, passing alone and in any order).
 * Before each test the harness puts back what a test may have changed: the page blank at 1366 px, no problems
 * recorded, the receiver answering 200, and the first admin's sessions (the API's and the browser's) valid, made
 * anew when a test logged out, cleared cookies or logged in as someone else.
 *
 *   const ui = useUi();            // in a describe: starts in beforeAll, closes in afterAll
 *   it('…', async () => { await ui.goto('#/collections'); … });
 *   useUi({}, { firstAdmin: false })  // no admin yet: the setup link's page (ui.srv.setupToken)
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
/** Where pages are photographed (git-ignored): `<name>-1366.png` and `<name>-390.png`. */
export const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
export const EMAIL = 'admin@example.com';
export const PASSWORD = 'correct horse battery staple';

/** What the server's test helpers provide (packages/server/test/helpers/). */
export interface TestServer {
  baseUrl: string;
  setupToken: string | null;
  /** The running server's context: its secret box, database and clock, for planting states a test needs. */
  ctx: { box: { seal(value: string, id: string): string }; database: { db: any } };
  close(): Promise<void>;
}
export interface HttpsReceiver {
  url: string;
  ca: string;
  requests: { path: string; headers: IncomingHttpHeaders; body: string }[];
  setHandler(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): void;
  close(): Promise<void>;
}

export interface Ui {
  srv: TestServer;
  receiver: HttpsReceiver;
  page: Page;
  context: BrowserContext;
  /** Page errors, CSP violations and native dialogs seen so far: a test ends by expecting this to be empty. */
  problems: string[];
  url(path: string): string;
  /** Opens a route of the UI (`#/collections`) and waits for the navigation to be drawn. */
  goto(hash: string): Promise<void>;
  byTestId(id: string): ReturnType<Page['getByTestId']>;
  /** The admin API as the logged-in admin (cookie and CSRF token). */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** A fresh API token with these scopes (default: records read and write, events read). */
  token(scopes?: string[]): Promise<string>;
  /** The public API with a token. */
  api(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; headers: Headers }>;
  /** A collection made through the admin API, its fields `{name,type,required?}`. */
  collection(name: string, fields: Array<Record<string, unknown>>): Promise<void>;
  /** Full-page screenshots at 1366 px and at 390 px, then back to the laptop width. */
  screenshots(name: string): Promise<void>;
  /** axe-core over the page as it is now: WCAG 2 A and AA violations (empty when the page passes). */
  axe(): Promise<Array<{ id: string; impact: string | null; nodes: string[] }>>;
  /** How far the page is wider than the screen, and the first elements that stick out. */
  overflow(): Promise<{ by: number; wide: string[] }>;
}

let built: Promise<unknown> | null = null;
/** The UI is built once per test process, so no file runs against stale assets. */
const buildOnce = () =>
  (built ??= import('../build.mjs').then((m: { buildAdminUi(): Promise<string> }) => m.buildAdminUi()));

const axeSource = async () => readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const LAPTOP = { width: 1366, height: 860 };

const answerOk = (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
};

/** A new session of the first admin: its cookie (`svc_admin=…`) and CSRF token. */
async function logIn(url: (path: string) => string): Promise<{ cookie: string; csrf: string }> {
  const session = await fetch(url('/admin/v1/session'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
  expect(session.status).toBe(200);
  const { csrfToken } = (await session.json()) as { csrfToken: string };
  return { cookie: session.headers.getSetCookie().map((c) => c.split(';')[0]).join('; '), csrf: csrfToken };
}

/** The email of the admin whose session `cookie` is, or null when it is no session (ended, expired, absent). */
async function sessionOf(url: (path: string) => string, cookie: string): Promise<string | null> {
  if (!cookie) return null;
  const res = await fetch(url('/admin/v1/session'), { headers: { cookie } });
  return res.status === 200 ? ((await res.json()) as { admin: { email: string } }).admin.email : null;
}

/**
 * Starts everything in beforeAll (a server on SQLite with loopback targets allowed and a receiver it trusts, the
 * first admin, a browser logged in at 1366 × 860) and closes it in afterAll. Call inside `describe.skipIf(!hasChromium)`.
 * `firstAdmin: false` leaves the server without an admin and the browser without a session.
 */
export function useUi(env: Record<string, string> = {}, options: { firstAdmin?: boolean } = {}): Ui {
  const firstAdmin = options.firstAdmin ?? true;
  const ui = { problems: [] as string[] } as Ui;
  let browser: Browser;
  let tmp: string;
  /** The harness's own session, for ui.admin: never the browser's, so a test's logout or password change spares it. */
  let csrf = '';
  let cookie = '';

  beforeAll(async () => {
    await buildOnce();
    await mkdir(SCREENSHOTS, { recursive: true });
    const { startHttpsReceiver } = (await import('../../server/test/helpers/https-receiver.js')) as { startHttpsReceiver(): Promise<HttpsReceiver> };
    const { startTestServer } = (await import('../../server/test/helpers/server.js')) as {
      startTestServer(opts: { dialect: 'sqlite'; env: Record<string, string> }): Promise<TestServer>;
    };
    ui.receiver = await startHttpsReceiver();
    tmp = await mkdtemp(join(tmpdir(), 'svc-admin-ui-'));
    const caFile = join(tmp, 'receiver-ca.pem');
    await writeFile(caFile, ui.receiver.ca);
    ui.srv = await startTestServer({
      dialect: 'sqlite',
      env: { SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_CA_FILE: caFile, SVC_WEBHOOK_RETRY_SCHEDULE: '0s,1s', ...env },
    });
    ui.url = (path) => new URL(path, ui.srv.baseUrl).toString();

    if (firstAdmin) {
      // The first admin through the API, then the harness's session.
      const setup = await fetch(ui.url('/admin/v1/setup'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: ui.srv.setupToken, email: EMAIL, password: PASSWORD }),
      });
      expect(setup.status).toBe(201);
      ({ cookie, csrf } = await logIn(ui.url));
    }
    ui.admin = async (method, path, body) => {
      const res = await fetch(ui.url(path), {
        method,
        headers: { cookie, 'x-svc-csrf': csrf, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json().catch(() => null) };
    };
    ui.token = async (scopes = ['records:read', 'records:write', 'events:read']) => {
      const res = await ui.admin('POST', '/admin/v1/tokens', { name: `t${Date.now()}`, scopes, collections: null });
      expect(res.status).toBe(201);
      return res.json.token;
    };
    ui.api = async (token, method, path, body) => {
      const res = await fetch(ui.url(`/api/v1${path}`), {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json().catch(() => null), headers: res.headers };
    };
    ui.collection = async (name, fields) => {
      const res = await ui.admin('POST', '/admin/v1/collections', { name, fields });
      expect(res.status, JSON.stringify(res.json)).toBe(201);
    };

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    ui.context = await browser.newContext({ viewport: LAPTOP });
    ui.page = await ui.context.newPage();
    ui.page.setDefaultTimeout(10_000);
    ui.page.on('pageerror', (err) => ui.problems.push(`page error: ${err.message}`));
    ui.page.on('console', (msg) => {
      if (msg.type() === 'error') ui.problems.push(`console: ${msg.text()}`);
    });
    // The UI uses its own <dialog>, never window.confirm/alert.
    ui.page.on('dialog', (dialog) => {
      ui.problems.push(`native dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    ui.byTestId = (id) => ui.page.getByTestId(id);
    ui.goto = async (hash) => {
      await ui.page.goto(ui.url(`/admin/${hash}`));
      await ui.byTestId('account-email').waitFor();
    };
    ui.screenshots = async (name) => {
      await ui.page.screenshot({ path: join(SCREENSHOTS, `${name}-1366.png`), fullPage: true });
      await ui.page.setViewportSize({ width: 390, height: 844 });
      await ui.page.screenshot({ path: join(SCREENSHOTS, `${name}-390.png`), fullPage: true });
      await ui.page.setViewportSize(LAPTOP);
    };
    const axe = await axeSource();
    ui.axe = async () => {
      // Through a function the page runs, not an inline <script>: the UI's CSP refuses inline scripts.
      await ui.page.evaluate(axe);
      return ui.page.evaluate(async () => {
        const result = await (window as any).axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
        return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n: any) => n.target.join(' ')) }));
      });
    };
    ui.overflow = () =>
      ui.page.evaluate(() => {
        const wide = Array.from(document.querySelectorAll('body *'))
          .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
          .map((el) => `${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''}`);
        return { by: document.documentElement.scrollWidth - window.innerWidth, wide: wide.slice(0, 5) };
      });
  }, 120_000);

  beforeEach(async () => {
    await ui.page.goto('about:blank');
    await ui.page.setViewportSize(LAPTOP);
    ui.problems.length = 0;
    ui.receiver.setHandler(answerOk);
    if (!firstAdmin) return;
    if ((await sessionOf(ui.url, cookie)) !== EMAIL) ({ cookie, csrf } = await logIn(ui.url));
    // The browser's session: the first admin's own, not the harness's (a logout in the page would end both).
    const browserCookie = (await ui.context.cookies(ui.url('/admin/'))).filter((c) => c.name === 'svc_admin').map((c) => `${c.name}=${c.value}`).join('; ');
    if ((await sessionOf(ui.url, browserCookie)) !== EMAIL) {
      await ui.context.clearCookies();
      const [name, value] = (await logIn(ui.url)).cookie.split('=') as [string, string];
      // As the server sets it (Path=/admin): a cookie of another path would stay beside the one a login in the page
      // sets, and be sent first.
      await ui.context.addCookies([{ name, value, domain: new URL(ui.srv.baseUrl).hostname, path: '/admin', httpOnly: true, sameSite: 'Strict' }]);
    }
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await ui.srv?.close();
    await ui.receiver?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  return ui;
}
