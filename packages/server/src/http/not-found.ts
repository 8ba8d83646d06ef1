import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

/**
 * Unknown route → not_found; a known path with another method → method_not_allowed with `Allow`.
 * Route patterns are collected as they are registered and matched as regular expressions here.
 */
export function registerNotFound(app: FastifyInstance): void {
  const routes: Array<{ method: string; pattern: RegExp }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const source = route.url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const method of methods) routes.push({ method, pattern: new RegExp(`^${source}$`) });
  });
  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      throw new AppError('method_not_allowed', `${request.method} is not allowed here.`, { headers: { allow: allowed.join(', ') } });
    }
    throw new AppError('not_found', `No route ${request.method} ${path}.`);
  });
}
