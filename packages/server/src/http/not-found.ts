import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

/**
 * Unknown route → not_found; a known path with another method → method_not_allowed with `Allow`.
 * Route patterns are collected as they are registered and matched as regular expressions here. A wildcard route
 * (the admin UI's `/admin/*`, GET only) counts for a path no other route matches, and never for the APIs' paths:
 * `GET /admin/v1/webhooks/{id}/rotate-secret` is a 405 that allows POST, not the UI's 404 with `Allow: GET`.
 */
export function registerNotFound(app: FastifyInstance): void {
  const routes: Array<{ method: string; pattern: RegExp; wildcard: boolean }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const source = route.url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const wildcard = route.url.split('/').includes('*');
    for (const method of methods) routes.push({ method, pattern: new RegExp(`^${source}$`), wildcard });
  });
  const unmatched = (method: string, path: string): AppError => {
    const matching = routes.filter((r) => r.pattern.test(path));
    const specific = matching.filter((r) => !r.wildcard);
    const api = path.startsWith('/api/') || path.startsWith('/admin/v1/');
    const allowed = [...new Set((specific.length > 0 || api ? specific : matching).map((r) => r.method))];
    if (allowed.length > 0 && !allowed.includes(method)) {
      return new AppError('method_not_allowed', `${method} is not allowed here.`, { headers: { allow: allowed.join(', ') } });
    }
    return new AppError('not_found', `No route ${method} ${path}.`);
  };
  app.decorate('unmatchedRoute', unmatched);
  app.setNotFoundHandler(async (request: FastifyRequest, _reply: FastifyReply) => {
    throw unmatched(request.method, request.url.split('?')[0] ?? '');
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** What a request no route of its method answers gets: 405 with `Allow` when the path has other methods, else 404. */
    unmatchedRoute(method: string, path: string): AppError;
  }
}
