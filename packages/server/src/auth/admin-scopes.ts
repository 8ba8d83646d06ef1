/**
 * Which admin-token scope each admin route needs (SPEC §16): the one place that decides it. The admin auth hook asks
 * it on every request that carries an admin token, and app.ts asks it once per route to write the route's OpenAPI
 * `security`, so the document and the check cannot disagree.
 */
import { AppError } from '../errors.js';

export type AdminScope = 'admin:read' | 'admin:webhooks' | 'admin:collections' | 'admin:tokens';
export const ADMIN_SCOPES: readonly AdminScope[] = ['admin:read', 'admin:webhooks', 'admin:collections', 'admin:tokens'];

/**
 * `scope`: a token needs it. `session-only`: no token may use the route (403), whatever its scopes: logging in and
 * out, setup, admin accounts and admin tokens themselves, so a leaked token can neither mint another nor take over
 * an account. `unclassified`: no rule names the route; refused like session-only, and a unit test fails on it.
 */
export type AdminRouteDecision = { kind: 'scope'; scope: AdminScope } | { kind: 'session-only' } | { kind: 'unclassified' };

const SESSION_ONLY = ['/admin/v1/session', '/admin/v1/setup', '/admin/v1/admin-tokens', '/admin/v1/admins'];

/** What writes (every method but GET and HEAD) need, by the resource the path names. */
const WRITES: ReadonlyArray<readonly [prefix: string, scope: AdminScope]> = [
  // Targets with test, rotate-secret, recover and replay; deliveries with retry and bulk retry.
  ['/admin/v1/webhooks', 'admin:webhooks'],
  ['/admin/v1/deliveries', 'admin:webhooks'],
  // Collections, their fields, and the admin record writes under /admin/v1/collections/{name}/records.
  ['/admin/v1/collections', 'admin:collections'],
  // API tokens only: admin tokens are session-only above.
  ['/admin/v1/tokens', 'admin:tokens'],
];

const under = (pattern: string, prefix: string): boolean => pattern === prefix || pattern.startsWith(`${prefix}/`);

/** `pattern` is the route as registered (`/admin/v1/webhooks/:id`), never the request's URL. */
export function adminRouteDecision(method: string, pattern: string): AdminRouteDecision {
  if (SESSION_ONLY.some((p) => under(pattern, p))) return { kind: 'session-only' };
  if (!under(pattern, '/admin/v1')) return { kind: 'unclassified' };
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD') return { kind: 'scope', scope: 'admin:read' };
  const write = WRITES.find(([prefix]) => under(pattern, prefix));
  return write ? { kind: 'scope', scope: write[1] } : { kind: 'unclassified' };
}

/** The scope a token needs on this route, or null when no token may use it. */
export function adminScopeFor(method: string, pattern: string): AdminScope | null {
  const d = adminRouteDecision(method, pattern);
  return d.kind === 'scope' ? d.scope : null;
}

/** Null when an admin token with these scopes may use the route; else the 403 to answer. */
export function adminTokenRefusal(scopes: readonly AdminScope[], method: string, pattern: string): AppError | null {
  const scope = adminScopeFor(method, pattern);
  if (scope === null) return new AppError('forbidden', 'Admin tokens may not use this route: it needs an admin session.');
  return scopes.includes(scope) ? null : new AppError('forbidden', `This admin token lacks the ${scope} scope.`);
}
