/**
 * The only way the UI talks to svc: the admin HTTP API under /admin/v1, with the session cookie
 * (sent by the browser, HttpOnly, Path=/admin) and the CSRF token of that session in X-Svc-CSRF.
 */
import type { Problem, SessionInfo } from './types.js';

const BASE = '/admin/v1';

export class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.name = 'ApiError';
  }
  get code(): string {
    return this.problem.code;
  }
}

interface SessionState {
  csrfToken: string | null;
  email: string | null;
}

export const session: SessionState = { csrfToken: null, email: null };

/** Called when an authenticated call answers 401: the session is gone (expired, logged out elsewhere). */
let onUnauthorized: () => void = () => undefined;
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export interface RequestOptions {
  body?: unknown;
  /** An array repeats the parameter (`topic=a&topic=b`). */
  query?: Record<string, string | number | boolean | null | undefined | string[]>;
  /** Login, setup and session restore run without a CSRF token and must not trigger the 401 redirect. */
  anonymous?: boolean;
  /** Extra request headers, such as a record write's `If-Match: "<version>"`. */
  headers?: Record<string, string>;
  /**
   * A 401 that may mean a wrong password rather than a lost session (changing one's password): the caller
   * decides, so the answer does not send the page to the login screen by itself.
   */
  passwordCheck?: boolean;
}

export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  try {
    return await send<T>(method, path, options);
  } catch (err) {
    // Logging in from another tab replaces the session cookie, which makes this tab's CSRF token
    // foreign. Pick up the current session's token once and repeat the call.
    if (!(err instanceof ApiError) || err.code !== 'csrf_failed' || options.anonymous || !session.csrfToken) throw err;
    const current = await send<SessionInfo>('GET', '/session', { anonymous: true })
      .catch(() => null);
    if (!current || current.csrfToken === session.csrfToken) throw err;
    session.csrfToken = current.csrfToken;
    session.email = current.admin.email;
    return send<T>(method, path, options);
  }
}

async function send<T>(method: string, path: string, options: RequestOptions): Promise<T> {
  let url = BASE + path;
  if (options.query) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query)) {
      if (Array.isArray(value)) for (const v of value) params.append(key, v);
      else if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
    }
    const qs = params.toString();
    if (qs) url += `?${qs}`;
  }
  const headers: Record<string, string> = { ...options.headers, Accept: 'application/json, application/problem+json' };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (!options.anonymous && session.csrfToken) headers['X-Svc-CSRF'] = session.csrfToken;

  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch (err) {
    throw networkError(err);
  }

  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (response.ok) return parsed as T;

  const problem = toProblem(response, parsed);
  if (response.status === 401 && !options.anonymous && !options.passwordCheck) {
    session.csrfToken = null;
    onUnauthorized();
  }
  throw new ApiError(response.status, problem);
}

const networkError = (err: unknown): ApiError => new ApiError(0, {
  type: 'about:blank', title: 'Network error', status: 0, code: 'network_error', requestId: '',
  detail: `Could not reach the server (${err instanceof Error ? err.message : String(err)}).`,
});

function toProblem(response: Response, parsed: unknown): Problem {
  const requestId = response.headers.get('X-Request-ID') ?? '';
  if (parsed && typeof parsed === 'object' && 'status' in parsed) {
    const p = parsed as Partial<Problem>;
    return {
      type: p.type ?? 'about:blank',
      title: p.title ?? response.statusText,
      status: p.status ?? response.status,
      detail: p.detail ?? p.title ?? `HTTP ${response.status}`,
      code: p.code ?? 'unknown',
      requestId: p.requestId ?? requestId,
      ...(Array.isArray(p.errors) ? { errors: p.errors } : {}),
    };
  }
  return {
    type: 'about:blank',
    title: response.statusText || 'Error',
    status: response.status,
    detail: `The server answered ${response.status} ${response.statusText}.`,
    code: 'unknown',
    requestId,
  };
}

export const api = {
  get: <T>(path: string, query?: RequestOptions['query']) => request<T>('GET', path, { query }),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, { body: body ?? {} }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  del: (path: string, query?: RequestOptions['query']) => request<void>('DELETE', path, { query }),
};

/**
 * The public API's discovery documents (`/api/v1/capabilities`, `/api/v1/openapi.json`): they need no credentials,
 * so none are sent. Read for what the server itself says (its topics, its operations) instead of a copy in the UI.
 */
export async function discovery<T>(path: string): Promise<T> {
  const response = await fetch(`/api/v1${path}`, { headers: { Accept: 'application/json' }, credentials: 'omit', cache: 'no-store' })
    .catch((err: unknown) => {
      throw networkError(err);
    });
  const parsed: unknown = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, toProblem(response, parsed));
  return parsed as T;
}

/** Path segments from user data (collection names, ids) are always encoded. */
export const seg = (value: string): string => encodeURIComponent(value);
