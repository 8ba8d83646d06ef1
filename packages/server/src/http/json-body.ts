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
    done(null, parsed);
  });
}
