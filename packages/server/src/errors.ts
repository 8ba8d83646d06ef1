/**
 * The error catalogue: every code a client can branch on, with its HTTP status and title.
 * docs/errors.md is checked against this table by a test, so the two never drift.
 */
export const ERRORS = {
  unauthorized: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Not allowed' },
  csrf_failed: { status: 403, title: 'Cross-site request refused' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_failed: { status: 422, title: 'Validation failed' },
  invalid_query: { status: 400, title: 'Invalid query parameter' },
  invalid_json: { status: 400, title: 'Malformed JSON body' },
  bad_request: { status: 400, title: 'Bad request' },
  header_too_large: { status: 431, title: 'Request headers too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  request_timeout: { status: 408, title: 'Request timeout' },
  destination_refused: { status: 422, title: 'Webhook destination refused' },
  not_acceptable: { status: 406, title: 'Not acceptable' },
  cursor_expired: { status: 410, title: 'Cursor expired' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal error' },
  unavailable: { status: 503, title: 'Service unavailable' },
  query_timeout: { status: 503, title: 'Query timeout' },
  storage_full: { status: 507, title: 'Storage full' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/**
 * Why an attempt failed, as its record and the job's `lastError` say (SPEC §4); docs/errors.md lists the same codes,
 * checked by the same test as the table above.
 */
export const ATTEMPT_ERRORS = {
  http_status: 'the receiver answered with a status that is not 2xx',
  timeout: 'no status line within SVC_WEBHOOK_TIMEOUT_MS',
  connection_failed: 'the connection was refused, reset or closed; for a broker target, svc is not connected to the broker',
  tls_failed: 'the certificate did not verify for the host name, or the handshake failed',
  dns_failed: 'the host name did not resolve',
  destination_refused: 'the host resolved to an address that is not globally reachable',
  target_deleted: 'the target was deleted while the job was unfinished',
  result_unrecorded: "the attempt's result could not be stored as it was",
  no_stream: 'a nats target: no JetStream stream captures the subject, so nothing stored the message',
  unroutable: 'a rabbitmq target: the exchange does not exist, or no queue is bound for the routing key (the mandatory message was returned)',
  broker_refused: 'the broker refused the message: too large for it, a full stream, or another error it named',
} as const;

export type AttemptErrorCode = keyof typeof ATTEMPT_ERRORS;

export interface FieldError {
  /** JSON Pointer into the request body, or the query parameter's name. */
  path: string;
  message: string;
  /** Where in the parameter the fault starts, in code points (a filter's syntax or type error, SPEC §8). */
  position?: number;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.status = ERRORS[code].status;
  }
}

export const fail = (code: ErrorCode, detail: string, errors?: FieldError[]): never => {
  throw new AppError(code, detail, errors ? { errors } : {});
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  errors?: FieldError[];
}

export function problemBody(code: ErrorCode, detail: string, requestId: string, errors?: FieldError[]): Problem {
  const entry = ERRORS[code];
  const body: Problem = {
    type: `https://svc.dev/errors/${code}`,
    title: entry.title,
    status: entry.status,
    detail,
    code,
    requestId,
  };
  if (errors && errors.length > 0) body.errors = errors;
  return body;
}
