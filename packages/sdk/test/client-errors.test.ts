import { describe, expect, it } from 'vitest';
import { createClient, SvcApiError } from '../src/client/index.js';

// What the client makes of answers a real svc never gives but the network in between might: these run against a
// fetch double. Everything svc itself answers is covered end to end in client-records.test.ts.
function answering(response: () => Response) {
  const requests: Request[] = [];
  const client = createClient({
    baseUrl: 'http://svc.test/',
    token: 'svc_pat_test',
    headers: { 'user-agent': 'sdk-test/1' },
    fetch: async (request) => {
      requests.push(request);
      return response();
    },
  });
  return { client, requests };
}

async function failure(promise: Promise<unknown>): Promise<SvcApiError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(SvcApiError);
  return error as SvcApiError;
}

describe('SvcApiError', () => {
  it('takes every field from a problem document', async () => {
    const problem = {
      type: 'https://svc.dev/errors/validation_failed',
      title: 'Validation failed',
      status: 422,
      detail: 'The record does not match the collection.',
      code: 'validation_failed',
      requestId: 'req-body',
      errors: [{ path: '/data/title', message: 'is required' }],
    };
    const { client } = answering(
      () =>
        new Response(JSON.stringify(problem), {
          status: 422,
          headers: { 'content-type': 'application/problem+json', 'x-request-id': 'req-header' },
        }),
    );
    const e = await failure(client.records('issues').create({}));
    expect(e).toMatchObject({
      status: 422,
      code: 'validation_failed',
      requestId: 'req-body',
      title: 'Validation failed',
      detail: 'The record does not match the collection.',
      type: 'https://svc.dev/errors/validation_failed',
      errors: [{ path: '/data/title', message: 'is required' }],
      retryAfterSeconds: null,
    });
    expect(e.message).toBe('422 validation_failed: The record does not match the collection. (request req-body)');
  });

  it('falls back to X-Request-ID and the status when the body is not a problem', async () => {
    const { client } = answering(
      () =>
        new Response('<html>Bad Gateway</html>', {
          status: 502,
          statusText: 'Bad Gateway',
          headers: { 'content-type': 'text/html', 'x-request-id': 'req-proxy' },
        }),
    );
    const e = await failure(client.records('issues').list());
    expect(e).toMatchObject({ status: 502, code: 'http_error', requestId: 'req-proxy', title: 'Bad Gateway', errors: [] });
    expect(e.detail).toBe('<html>Bad Gateway</html>');
  });

  it('names an empty 503 unavailable and reads Retry-After', async () => {
    const { client } = answering(() => new Response(null, { status: 503, headers: { 'retry-after': '7' } }));
    const e = await failure(client.capabilities());
    expect(e).toMatchObject({ status: 503, code: 'unavailable', requestId: null, retryAfterSeconds: 7 });
  });

  it('is thrown for a failed DELETE too, and a 204 resolves to undefined', async () => {
    let status = 204;
    const { client, requests } = answering(() => new Response(null, { status }));
    await expect(client.records('issues').delete('rec_1', { ifMatch: 4 })).resolves.toBeUndefined();
    expect(requests[0]!.headers.get('if-match')).toBe('"4"');
    status = 404;
    expect((await failure(client.records('issues').delete('rec_1'))).code).toBe('not_found');
  });
});

describe('createClient', () => {
  it('sends the token, the extra headers and URL-encoded path segments', async () => {
    const { client, requests } = answering(
      () => new Response(JSON.stringify({ items: [], nextCursor: null }), { headers: { 'content-type': 'application/json' } }),
    );
    await client.records('odd name/..').list({ limit: 5, cursor: 'a+b' });
    const [request] = requests;
    expect(request!.url).toBe('http://svc.test/api/v1/collections/odd%20name%2F../records?limit=5&cursor=a%2Bb');
    expect(request!.headers.get('authorization')).toBe('Bearer svc_pat_test');
    expect(request!.headers.get('user-agent')).toBe('sdk-test/1');
  });

  it('sends no Authorization header without a token', async () => {
    const requests: Request[] = [];
    const client = createClient({
      baseUrl: 'http://svc.test',
      fetch: async (r) => {
        requests.push(r);
        return new Response('{"apiVersion":"1"}', { headers: { 'content-type': 'application/json' } });
      },
    });
    await client.capabilities();
    expect(requests[0]!.headers.has('authorization')).toBe(false);
  });

  it('refuses a base URL that is not http(s) and an empty collection name', () => {
    expect(() => createClient({ baseUrl: '127.0.0.1:8080' })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: 'http://svc.test' }).records('')).toThrow(TypeError);
  });
});
