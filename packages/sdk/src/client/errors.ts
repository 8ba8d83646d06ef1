import type { components } from './openapi.js';

/** The body of every svc error answer (RFC 9457 problem details), as the service's document describes it. */
export type Problem = components['schemas']['Problem'];

/** The error codes svc documents. Branch on these; a code outside them comes from something between you and svc. */
export type ErrorCode = Problem['code'];

/** One fault in a request: `path` is a JSON Pointer into the body (`/data/title`), or a query parameter's name. */
export type FieldError = { path: string; message: string };

/**
 * Codes for answers that are not svc problem documents (a proxy's 502 page, an empty 503): the status's code in
 * svc's catalogue where that is unambiguous, so callers can branch on `code` alone.
 */
const CODE_BY_STATUS: Readonly<Partial<Record<number, ErrorCode>>> = {
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal',
  503: 'unavailable',
};

/** Any non-2xx answer from svc. `code` is the stable field to branch on; `detail` is for people. */
export class SvcApiError extends Error {
  override readonly name = 'SvcApiError';
  /** The HTTP status. */
  readonly status: number;
  /** svc's error code (`precondition_failed`, `validation_failed`, …), or `http_error` when nothing more is known. */
  readonly code: ErrorCode | 'http_error';
  /** The request's id (body `requestId`, else the `X-Request-ID` header): quote it when asking about a failure. */
  readonly requestId: string | null;
  readonly title: string;
  readonly detail: string;
  /** The problem's `type` URI, when the answer was a problem document. */
  readonly type: string | null;
  /** The fields at fault, for `validation_failed` and `invalid_query`; empty otherwise. */
  readonly errors: readonly FieldError[];
  /** Seconds to wait before trying again, from `Retry-After` (on `rate_limited` and `unavailable`). */
  readonly retryAfterSeconds: number | null;

  constructor(init: {
    status: number;
    code: ErrorCode | 'http_error';
    requestId: string | null;
    title: string;
    detail: string;
    type?: string | null;
    errors?: readonly FieldError[];
    retryAfterSeconds?: number | null;
  }) {
    super(`${init.status} ${init.code}: ${init.detail}${init.requestId ? ` (request ${init.requestId})` : ''}`);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.title = init.title;
    this.detail = init.detail;
    this.type = init.type ?? null;
    this.errors = init.errors ?? [];
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.code === 'string' && typeof b.status === 'number' && typeof b.title === 'string';
}

function fieldErrors(value: unknown): FieldError[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((e): e is FieldError => typeof e?.path === 'string' && typeof e?.message === 'string')
    .map((e) => ({ path: e.path, message: e.message }));
}

function retryAfter(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/**
 * Builds the error for a failed answer. `body` is what openapi-fetch read: the parsed JSON, or the raw text when
 * the body was not JSON (an HTML error page from a proxy), or undefined when there was none.
 */
export function errorFromResponse(response: Response, body: unknown): SvcApiError {
  const headerId = response.headers.get('x-request-id');
  const retryAfterSeconds = retryAfter(response.headers);
  if (isProblem(body)) {
    return new SvcApiError({
      status: response.status,
      code: body.code,
      requestId: typeof body.requestId === 'string' && body.requestId ? body.requestId : headerId,
      title: body.title,
      detail: typeof body.detail === 'string' ? body.detail : body.title,
      type: typeof body.type === 'string' ? body.type : null,
      errors: fieldErrors(body.errors),
      retryAfterSeconds,
    });
  }
  const title = response.statusText || `HTTP ${response.status}`;
  return new SvcApiError({
    status: response.status,
    code: CODE_BY_STATUS[response.status] ?? 'http_error',
    requestId: headerId,
    title,
    detail: typeof body === 'string' && body.trim() ? body.trim().slice(0, 200) : title,
    retryAfterSeconds,
  });
}
