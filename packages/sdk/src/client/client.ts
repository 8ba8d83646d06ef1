import createFetchClient from 'openapi-fetch';
import type { components, paths } from './openapi.js';
import { runBatch, type BatchOperation, type BatchResult } from './batch.js';
import { EventsClient } from './events.js';
import { RecordsClient, unwrap, type ApiClient, type CallOptions, type CreateOptions, type RecordData } from './records.js';

/** `GET /api/v1/capabilities`: API version, features, the limits in force and the webhook topics. */
export type Capabilities = components['schemas']['Capabilities'];

/** svc's OpenAPI 3.1 document of the `/api/v1` routes, as JSON. */
export type OpenApiDocument = { openapi: string; paths: Record<string, unknown>; [key: string]: unknown };

export interface ClientOptions {
  /** svc's origin, e.g. `http://127.0.0.1:8080` (the paths already start with `/api/v1`). */
  baseUrl: string;
  /** An API token `svc_pat_…`. Optional only for the discovery calls, which need no credentials. */
  token?: string;
  /** A fetch to use instead of the global one (a proxy agent, retries, a test double). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request, e.g. `User-Agent`. `Authorization` comes from `token`. */
  headers?: Record<string, string>;
}

export interface SvcClient {
  /** `GET /api/v1/capabilities`. */
  capabilities(options?: CallOptions): Promise<Capabilities>;
  /** `GET /api/v1/openapi.json`. */
  openapi(options?: CallOptions): Promise<OpenApiDocument>;
  /** The records of one collection; `T` is the shape of their `data` (svc validates it, this type only claims it). */
  records<T extends object = RecordData>(collection: string): RecordsClient<T>;
  /** The event feed (needs a token with events:read): pages, a followed iterator (`list`), the live `stream`. */
  readonly events: EventsClient;
  /**
   * `POST /api/v1/batch`: the operations in one transaction (all or none), results in their order;
   * `idempotencyKey` makes a retried batch return the first answer.
   */
  batch(operations: readonly BatchOperation[], options?: CreateOptions): Promise<BatchResult[]>;
  /**
   * The underlying openapi-fetch client, typed from svc's document, for anything the methods above do not cover.
   * It answers `{ data, error, response }` instead of throwing.
   */
  readonly api: ApiClient;
}

/** Creates a client for svc's public API. Failed calls reject with `SvcApiError`; network failures as fetch's own. */
export function createClient(options: ClientOptions): SvcClient {
  if (typeof options?.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError('createClient: baseUrl must be an http(s) URL, e.g. http://127.0.0.1:8080');
  }
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const api: ApiClient = createFetchClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  const fetchImpl = options.fetch ?? ((request: Request) => fetch(request));
  const base = options.baseUrl.replace(/\/+$/, '');
  const openStream = (query: URLSearchParams, extra: Record<string, string>, signal: AbortSignal | undefined) => {
    const search = query.toString();
    return fetchImpl(
      new Request(`${base}/api/v1/events/stream${search ? `?${search}` : ''}`, {
        headers: { ...headers, accept: 'text/event-stream', ...extra },
        signal,
      }),
    );
  };

  return {
    api,
    events: new EventsClient(api, openStream),
    capabilities: (call = {}) => unwrap(api.GET('/api/v1/capabilities', { signal: call.signal })),
    openapi: async (call = {}) =>
      (await unwrap(api.GET('/api/v1/openapi.json', { signal: call.signal }))) as OpenApiDocument,
    records: <T extends object = RecordData>(collection: string) => {
      if (typeof collection !== 'string' || collection === '') {
        throw new TypeError('records: the collection name must be a non-empty string');
      }
      return new RecordsClient<T>(api, collection);
    },
    batch: (operations, call = {}) => runBatch(api, operations, call),
  };
}
