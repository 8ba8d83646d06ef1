// The client's tests run against a real svc. The sdk's source never imports the server; its tests may, to start one.
import { startTestServer, type TestServer } from '../../../server/test/helpers/server.js';
import type { Dialect } from '../../../server/test/helpers/db.js';

export { DIALECTS } from '../../../server/test/helpers/db.js';

export interface ClientTestServer {
  server: TestServer;
  baseUrl: string;
  /** An API token with records:read and records:write on every collection. */
  token: string;
  /** An admin call over plain HTTP (cookie + CSRF), for the set-up the public API cannot do. */
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

type Field = { name: string; type: 'text' | 'number' | 'integer' | 'boolean' | 'datetime' | 'json'; required?: boolean };

async function expectStatus(response: Response, status: number, what: string): Promise<Response> {
  if (response.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${response.status} ${await response.text()}`);
  }
  return response;
}

/**
 * svc on a fresh database, set up as a person would: the first admin through the setup token, a session, the
 * given collections, and one API token for the client.
 */
export async function startClientTestServer(opts: {
  dialect: Dialect;
  collections: Record<string, Field[]>;
}): Promise<ClientTestServer> {
  const server = await startTestServer({ dialect: opts.dialect, worker: false });
  const { baseUrl } = server;
  try {
    const json = { 'content-type': 'application/json' };
    const credentials = { email: 'owner@example.com', password: 'a long enough password' };
    await expectStatus(
      await fetch(`${baseUrl}/admin/v1/setup`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ token: server.setupToken, ...credentials }),
      }),
      201,
      'setup',
    );
    const login = await expectStatus(
      await fetch(`${baseUrl}/admin/v1/session`, { method: 'POST', headers: json, body: JSON.stringify(credentials) }),
      200,
      'login',
    );
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith('svc_admin='))?.split(';')[0];
    if (!cookie) throw new Error('login set no svc_admin cookie');
    const { csrfToken } = (await login.json()) as { csrfToken: string };

    const admin = (method: string, path: string, body?: unknown) =>
      fetch(`${baseUrl}${path}`, {
        method,
        headers: { cookie, 'x-svc-csrf': csrfToken, ...(body === undefined ? {} : json) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    for (const [name, fields] of Object.entries(opts.collections)) {
      await expectStatus(await admin('POST', '/admin/v1/collections', { name, fields }), 201, `collection ${name}`);
    }
    const created = await expectStatus(
      await admin('POST', '/admin/v1/tokens', {
        name: 'sdk tests',
        scopes: ['records:read', 'records:write'],
        collections: null,
      }),
      201,
      'token',
    );
    const { token } = (await created.json()) as { token: string };
    return { server, baseUrl, token, admin, close: () => server.close() };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** A fetch that counts what it sends, for asserting how many requests a call made and what they carried. */
export function recordingFetch(): { fetch: (request: Request) => Promise<Response>; requests: Request[] } {
  const requests: Request[] = [];
  return {
    requests,
    fetch: (request: Request) => {
      requests.push(request.clone());
      return fetch(request);
    },
  };
}
