import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { FUZZ_SEED, checkAnswer, headerValue, nastyJson, nastyText, rawUrlPiece } from '../helpers/fuzz.js';

/**
 * Whatever a client sends: never a 5xx, always problem+json with X-Request-ID when it is an error. Strings cover
 * every code point, lone surrogates and malformed percent-encodings (helpers/fuzz.ts); a fixed seed
 * (SVC_FUZZ_SEED to change it) makes every failure replayable.
 */
const runs = { seed: FUZZ_SEED, numRuns: 150 };
describe.each(DIALECTS)('fuzzing the public API (%s)', (dialect) => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', [
      { name: 'title', type: 'text', required: true },
      { name: 'n', type: 'integer' },
      { name: 'when', type: 'datetime' },
      { name: 'blob', type: 'json' },
    ]);
    auth = { authorization: `Bearer ${await t.token()}` };
  });
  afterAll(async () => t.close());

  const check = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) => checkAnswer(res, 'fuzzed request');

  it('record bodies', async () => {
    const value = fc.oneof(nastyText(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), nastyJson(4));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.dictionary(fc.constantFrom('title', 'n', 'when', 'blob', '__proto__', 'constructor', 'x'), value), nastyJson(5)), async (data) => {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: auth, payload: { data } as object });
        check(res);
      }),
      runs,
    );
  });

  it('raw bodies and content types', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(nastyText(300), fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b))), fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/merge-patch+json', ''), async (body, type) => {
        const headers: Record<string, string> = { ...auth };
        if (type) headers['content-type'] = type;
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers, payload: body });
        check(res);
      }),
      runs,
    );
  });

  it('query strings', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom('limit', 'cursor', 'foo', 'limit[]'), fc.oneof(rawUrlPiece, fc.integer().map(String), fc.base64String())), async (query) => {
        // Written raw, not through URLSearchParams: malformed percent-encodings must reach the server as sent.
        const qs = Object.entries(query).map(([k, v]) => `${k}=${v}`).join('&');
        const res = await t.app.inject({ method: 'GET', url: `/api/v1/collections/issues/records?${qs}`, headers: auth });
        check(res);
      }),
      runs,
    );
  });

  it('headers and paths', async () => {
    await fc.assert(
      fc.asyncProperty(
        headerValue,
        headerValue,
        rawUrlPiece,
        nastyText(),
        fc.constantFrom('GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT'),
        fc.boolean(),
        async (authHeader, ifMatch, id, title, method, validToken) => {
          const res = await t.app.inject({
            method: method as 'GET',
            url: `/api/v1/collections/issues/records/${id}`,
            headers: { authorization: validToken ? auth.authorization! : authHeader, 'if-match': ifMatch, 'idempotency-key': ifMatch },
            payload: method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : { data: { title } },
          });
          check(res);
        },
      ),
      runs,
    );
  });
});
