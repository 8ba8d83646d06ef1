import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, sep } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { AppError } from '../../errors.js';
import { MAX_PARAM_LENGTH } from '../problems.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json',
};

const INDEX = 'index.html';

function uiRoot(): string | null {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('svc-admin-ui/package.json')), 'dist');
  } catch {
    return null;
  }
}

/**
 * The admin UI: static files built by packages/admin-ui, served at /admin/. Unknown paths get index.html
 * (client-side routes such as /admin/setup); /admin/v1/* never does, it is the API. `root` replaces the built
 * files' folder (tests); without index.html there every page is 503 `unavailable`, never a loop looking for it.
 */
export const adminUiRoutes: FastifyPluginAsync<{ root?: string }> = async (app, options) => {
  const root = options.root ?? uiRoot();
  const cache = new Map<string, Buffer>();

  async function serve(reply: FastifyReply, relative: string): Promise<FastifyReply> {
    if (!root) throw new AppError('unavailable', 'The admin UI is not built; run npm run build.');
    const path = normalize(join(root, relative));
    if (!path.startsWith(root + sep)) throw new AppError('not_found', 'No such file.');
    const ext = extname(path);
    let body = cache.get(path);
    if (!body) {
      try {
        body = await readFile(path);
      } catch {
        if (relative === INDEX) throw new AppError('unavailable', 'The admin UI is not built (no index.html); run npm run build.');
        if (ext !== '' && ext !== '.html') throw new AppError('not_found', 'No such file.');
        return serve(reply, INDEX);
      }
      cache.set(path, body);
    }
    return reply
      .type(TYPES[ext] ?? 'application/octet-stream')
      .header('cache-control', ext === '.html' ? 'no-cache' : 'public, max-age=300')
      .send(body);
  }

  app.get('/admin', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/admin/', 302));
  app.get('/admin/', { schema: { hide: true } }, async (_req, reply) => serve(reply, INDEX));
  app.get('/admin/*', { schema: { hide: true } }, async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    if (rest.split('/').some((segment) => segment.length > MAX_PARAM_LENGTH)) {
      // The router sends an over-long API parameter here (this wildcard has no length limit): answer as it would.
      throw new AppError('uri_too_long', 'A path segment is longer than any identifier or name can be.');
    }
    if (rest === 'v1' || rest.startsWith('v1/')) throw new AppError('not_found', 'No such route.');
    return serve(reply, rest === '' ? INDEX : rest);
  });
};
