import createFetchClient from 'openapi-fetch';
import { CollectionsAdmin } from './admin-collections.js';
import { DeliveriesAdmin } from './admin-deliveries.js';
import type { paths } from './admin-openapi.js';
import type { AdminApi } from './admin-types.js';
import { WebhooksAdmin } from './admin-webhooks.js';
import { unwrap, type CallOptions } from './records.js';

/** svc's OpenAPI 3.1 document of the `/admin/v1` routes, as JSON. */
export type AdminOpenApiDocument = { openapi: string; paths: Record<string, unknown>; [key: string]: unknown };

export interface AdminClientOptions {
  /** svc's origin, e.g. `http://127.0.0.1:8080` (the paths already start with `/admin/v1`). */
  baseUrl: string;
  /**
   * An admin token `svcadm_…` (`svc admin-token create --name N --scope S…`, or the admin UI). Its scopes decide what
   * the client may do: `admin:read` every read, `admin:collections` and `admin:webhooks` the writes; a call outside
   * them is 403 `forbidden`.
   */
  token: string;
  /** A fetch to use instead of the global one (a proxy agent, retries, a test double). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request, e.g. `User-Agent`. `Authorization` comes from `token`. */
  headers?: Record<string, string>;
}

export interface SvcAdminClient {
  /** Collections and their fields. */
  readonly collections: CollectionsAdmin;
  /** Webhook targets: CRUD, secret rotation, test delivery, stats, recover and replay. */
  readonly webhooks: WebhooksAdmin;
  /** Delivery jobs: search, one with its attempts, retry one or many. */
  readonly deliveries: DeliveriesAdmin;
  /** `GET /admin/v1/openapi.json`: the document these types were generated from, as this svc serves it now. */
  openapi(options?: CallOptions): Promise<AdminOpenApiDocument>;
  /**
   * The underlying openapi-fetch client, typed from svc's admin document, for everything else (API tokens, events,
   * admin record writes). It answers `{ data, error, response }` instead of throwing.
   */
  readonly api: AdminApi;
}

/**
 * Creates a client for svc's admin API with an admin token. Failed calls reject with `SvcApiError` (the same class
 * as the public client's); network failures as fetch's own.
 */
export function createAdminClient(options: AdminClientOptions): SvcAdminClient {
  if (typeof options?.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError('createAdminClient: baseUrl must be an http(s) URL, e.g. http://127.0.0.1:8080');
  }
  // svc answers a missing or foreign credential with 401 on every admin route; saying so here names the cause.
  if (typeof options.token !== 'string' || !options.token.startsWith('svcadm_')) {
    throw new TypeError('createAdminClient: token must be an admin token (svcadm_…), e.g. from `svc admin-token create`');
  }
  const api: AdminApi = createFetchClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers: { ...options.headers, authorization: `Bearer ${options.token}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    api,
    collections: new CollectionsAdmin(api),
    webhooks: new WebhooksAdmin(api),
    deliveries: new DeliveriesAdmin(api),
    openapi: async (call = {}) =>
      (await unwrap(api.GET('/admin/v1/openapi.json', { signal: call.signal }))) as AdminOpenApiDocument,
  };
}
