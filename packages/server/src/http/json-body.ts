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

// NUL, or a surrogate without its other half.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The JSON Pointer of the first key or string value that is not storable text, or null. PostgreSQL's `text`
 * cannot hold NUL, and its JSON functions refuse a `\u0000` escape and a lone surrogate's escape even where a
 * text column would keep them; so svc refuses both in every body (docs/http.md) rather than store what it could
 * not later read back. Iterative, like jsonDepth.
 */
export function findUnstorableText(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) return path === '' ? '/' : path;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    for (const [key, child] of Object.entries(v)) {
      const at = `${path}/${escapeToken(key)}`;
      if (UNSTORABLE.test(key)) return at;
      stack.push([child, at]);
    }
  }
  return null;
}

/**
 * The JSON Pointer of the first number that JSON.parse made ±Infinity (a literal past the double range: `1e309`, 309
 * digits), or null. JSON cannot carry Infinity: JSON.stringify writes it as null, so a json field would be stored and
 * read back as null, silently. Iterative, like jsonDepth.
 */
export function findInfiniteNumber(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return path === '' ? '/' : path;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    for (const [key, child] of Object.entries(v)) stack.push([child, `${path}/${escapeToken(key)}`]);
  }
  return null;
}

// Only a literal with a 3-digit exponent or a run of 309 digits can overflow a double: the walk runs only then.
const SUSPECT_NUMBER = /[eE][+]?\d{3}|\d{309}/;

// Valid UTF-8 decodes to well-formed text without NUL: only these JSON escapes can produce what findUnstorableText finds.
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * JSON bodies: size bounded by Fastify's bodyLimit before parsing, depth bounded after. An empty body is
 * "no body", so body-less POSTs (test, retry) and optional bodies work with or without a Content-Type.
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
    const badAt = SUSPECT_ESCAPE.test(text) ? findUnstorableText(parsed) : null;
    if (badAt !== null) {
      const message = 'contains NUL (U+0000) or a lone surrogate, which is not accepted';
      return done(new AppError('validation_failed', 'Texts may not contain NUL (U+0000) or lone surrogates.', { errors: [{ path: badAt, message }] }), undefined);
    }
    const infiniteAt = SUSPECT_NUMBER.test(text) ? findInfiniteNumber(parsed) : null;
    if (infiniteAt !== null) {
      const message = 'is a number out of range (beyond ±1.7976931348623157e308), which is not accepted';
      return done(new AppError('validation_failed', 'Numbers must lie within the range of a double.', { errors: [{ path: infiniteAt, message }] }), undefined);
    }
    done(null, parsed);
  });
  // An empty body has no media type to refuse: it is no body, whatever Content-Type a client library added
  // (fetch sends text/plain with body ''). Anything else that is not JSON stays 415.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    done(new AppError('unsupported_media_type', `Only application/json bodies are accepted, not ${String(request.headers['content-type'] ?? 'none')}.`), undefined);
  });
}
