import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/** Deepest nesting of arrays/objects, iteratively (a recursive walk could itself overflow the stack). */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) max = d;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
    }
  }
  return max;
}

const escapeToken = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON Pointer of the first key or string value holding U+0000, or null. PostgreSQL's `text` cannot hold
 * NUL and SQLite's C strings end at it, so svc refuses it in every body (docs/errors.md) rather than store
 * something other than what was sent. Iterative, like jsonDepth.
 */
export function findNul(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path === '' ? '/' : path;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    for (const [key, child] of Object.entries(v)) {
      const at = `${path}/${escapeToken(key)}`;
      if (key.includes('\u0000')) return at;
      stack.push([child, at]);
    }
  }
  return null;
}

/**
 * JSON bodies: size bounded by Fastify's bodyLimit before parsing, depth bounded after. An empty body is
 * "no body", so body-less POSTs (test, retry) work with or without a Content-Type.
 */
export function registerJsonParser(app: FastifyInstance, maxDepth: number): void {
  // Only JSON is accepted anywhere: any other content type is 415 before a byte is parsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(\s*;.*)?$/i, { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      return done(new AppError('invalid_json', `The body is not valid JSON: ${(err as Error).message}`), undefined);
    }
    if (jsonDepth(parsed) > maxDepth) return done(new AppError('validation_failed', `The body nests deeper than ${maxDepth} levels.`), undefined);
    // JSON can carry NUL only escaped; without the escape in the text there is nothing to look for.
    const nulAt = text.includes('\\u0000') ? findNul(parsed) : null;
    if (nulAt !== null) {
      return done(new AppError('validation_failed', 'Texts may not contain NUL (U+0000).', { errors: [{ path: nulAt, message: 'contains NUL (U+0000), which is not accepted' }] }), undefined);
    }
    done(null, parsed);
  });
}
