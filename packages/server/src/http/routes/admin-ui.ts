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

/**
 * svc's icon, drawn here rather than shipped as a binary: a 32×32 ICO (one 32-bit image with alpha, the format every
 * browser asks /favicon.ico for): a blue rounded square with a white ring. Edges are anti-aliased by sampling each
 * pixel 4×4 times. 4,286 bytes, built once at start.
 */
export function faviconIco(size = 32): Buffer {
  const coverage = (inside: (x: number, y: number) => boolean, px: number, py: number): number => {
    let n = 0;
    for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) if (inside(px + (i + 0.5) / 4, py + (j + 0.5) / 4)) n++;
    return n / 16;
  };
  const c = size / 2;
  const corner = size * 0.22;
  const square = (x: number, y: number): boolean => {
    const dx = Math.max(Math.abs(x - c) - (c - corner), 0);
    const dy = Math.max(Math.abs(y - c) - (c - corner), 0);
    return dx * dx + dy * dy <= corner * corner;
  };
  const ring = (x: number, y: number): boolean => {
    const r = Math.hypot(x - c, y - c);
    return r >= size * 0.2 && r <= size * 0.32;
  };
  const pixels = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const a = coverage(square, x, y);
      const w = Math.min(a, coverage(ring, x, y));
      // BGRA, rows bottom-up; blue #2563eb blended towards white where the ring is.
      const at = ((size - 1 - y) * size + x) * 4;
      const mix = (blue: number) => Math.round(blue + (255 - blue) * (a === 0 ? 0 : w / a));
      pixels.set([mix(0xeb), mix(0x63), mix(0x25), Math.round(a * 255)], at);
    }
  }
  const mask = Buffer.alloc(size * Math.ceil(size / 32) * 4); // the AND mask: all zero, alpha decides
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(size, 4);
  header.writeInt32LE(size * 2, 8); // the image and its mask, stacked
  header.writeUInt16LE(1, 12);
  header.writeUInt16LE(32, 14);
  header.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([header, pixels, mask]);
  const dir = Buffer.alloc(6 + 16);
  dir.writeUInt16LE(1, 2); // type 1: icon
  dir.writeUInt16LE(1, 4); // one image
  dir.writeUInt8(size, 6);
  dir.writeUInt8(size, 7);
  dir.writeUInt16LE(1, 10);
  dir.writeUInt16LE(32, 12);
  dir.writeUInt32LE(image.length, 14);
  dir.writeUInt32LE(dir.length, 18);
  return Buffer.concat([dir, image]);
}

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

  const icon = faviconIco();
  for (const path of ['/favicon.ico', '/admin/favicon.ico']) {
    app.get(path, { schema: { hide: true } }, async (_req, reply) => reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(icon));
  }
  app.get('/admin', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/admin/', 302));
  app.get('/admin/', { schema: { hide: true } }, async (_req, reply) => serve(reply, INDEX));
  app.get('/admin/*', { schema: { hide: true } }, async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    if (rest.split('/').some((segment) => segment.length > MAX_PARAM_LENGTH)) {
      // The router sends an over-long API parameter here (this wildcard has no length limit): answer as it would.
      throw new AppError('uri_too_long', 'A path segment is longer than any identifier or name can be.');
    }
    // The admin API's paths are not the UI's: answered as the not-found handler answers them (a 405 where the path
    // has other methods).
    if (rest === 'v1' || rest.startsWith('v1/')) throw app.unmatchedRoute(request.method, request.url.split('?')[0] ?? '');
    return serve(reply, rest === '' ? INDEX : rest);
  });
};
