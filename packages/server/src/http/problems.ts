import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { classifyDatabaseError, RETRY_AFTER_SECONDS, type DatabaseErrorKind } from '../db/database-errors.js';
import { AppError, ERRORS, problemBody, type ErrorCode, type FieldError } from '../errors.js';
import { newRequestId } from './request-id.js';

/** Everything that goes wrong leaves as application/problem+json with a stable code: one mapping, here. */

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

const escapeToken = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

function issueToField(issue: AjvIssue, context: string): FieldError {
  let path = issue.instancePath;
  let message = issue.message ?? 'is invalid';
  if (issue.keyword === 'required') {
    path += `/${escapeToken(String(issue.params.missingProperty))}`;
    message = 'is required';
  } else if (issue.keyword === 'additionalProperties') {
    path += `/${escapeToken(String(issue.params.additionalProperty))}`;
    message = 'is not an accepted field';
  } else if (issue.keyword === 'anyOf' || issue.keyword === 'const' || issue.keyword === 'enum') {
    const allowed = issue.params.allowedValues ?? issue.params.allowedValue;
    message = allowed !== undefined ? `must be one of ${JSON.stringify(allowed)}` : 'is not one of the accepted values';
  }
  // A query parameter or header is named as such (SPEC §2): `topic`, not `topic/0` for the first of a repeated one.
  if (context !== 'body') path = path.replace(/^\//, '').split('/')[0]!.replace(/~1/g, '/').replace(/~0/g, '~') || context;
  return { path: path === '' ? '/' : path, message };
}

/** A branch's issue that says more than "not this type": the value had a branch's type and broke one of its rules. */
const CONSTRAINT = (keyword: string): boolean => !['type', 'anyOf', 'const', 'enum', 'required', 'additionalProperties'].includes(keyword);

/**
 * ajv reports each failed anyOf branch too; keep the most specific issue per path: the union's own ("is not one of the
 * accepted values"), unless a branch of the value's type names the rule it broke (a 50 KB `filter` where a string of
 * at most 2,048 characters or null is accepted: "must NOT have more than 2048 characters", not the union's words).
 */
function fieldErrors(issues: AjvIssue[], context: string): FieldError[] {
  const out = new Map<string, FieldError>();
  const specific = new Set<string>();
  for (const issue of issues) {
    const field = issueToField(issue, context);
    if (specific.has(field.path)) continue;
    if (CONSTRAINT(issue.keyword) && issues.some((i) => i.keyword === 'anyOf' && i.instancePath === issue.instancePath)) {
      out.set(field.path, field);
      specific.add(field.path);
    } else if (!out.has(field.path) || issue.keyword === 'anyOf') out.set(field.path, field);
  }
  return [...out.values()];
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_BAD_URL: 'bad_request',
  FST_ERR_MAX_PARAM_LENGTH: 'uri_too_long',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_MISSING_BODY: 'bad_request',
};

function byStatus(status: number): ErrorCode {
  const found = (Object.keys(ERRORS) as ErrorCode[]).find((c) => ERRORS[c].status === status);
  return found ?? (status >= 500 ? 'internal' : 'bad_request');
}

export function sendProblem(reply: FastifyReply, code: ErrorCode, detail: string, errors?: FieldError[], headers?: Record<string, string>): FastifyReply {
  const body = problemBody(code, detail, String(reply.request.id), errors);
  if (headers) reply.headers(headers);
  return reply.code(body.status).type('application/problem+json').send(body);
}

const DATABASE_DETAIL: Record<DatabaseErrorKind, string> = {
  unavailable:
    'The database cannot be reached right now; try again after Retry-After seconds. A write answered so may or may not have been applied: send it again with the same Idempotency-Key, or read before repeating it.',
  storage_full: 'The database has no space left: nothing of this request was committed. Reads still work; send it again once space is freed.',
};

/**
 * An outage of the database (SPEC §12): 503 `unavailable` or 507 `storage_full` with Retry-After, never `internal`.
 * Logged as a warning, not as an unhandled error: the fault is outside svc, and the counter says how often.
 */
function databaseProblem(server: FastifyInstance, kind: DatabaseErrorKind, error: Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  server?.countDatabaseError?.(kind);
  request.log.warn({ err: error, kind }, 'database outage');
  const code: ErrorCode = kind === 'storage_full' ? 'storage_full' : 'unavailable';
  return sendProblem(reply, code, DATABASE_DETAIL[kind], undefined, { 'retry-after': String(RETRY_AFTER_SECONDS[kind]) });
}

export function errorHandler(this: FastifyInstance, error: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AppError) {
    if (error.code === 'unauthorized' && request.url.startsWith('/api/') && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', 'Bearer realm="svc"');
    return sendProblem(reply, error.code, error.message, error.extra.errors, error.extra.headers);
  }
  const fe = error as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (fe.validation) {
    const context = fe.validationContext ?? 'body';
    // A path that cannot name anything (a malformed id or collection name) names nothing that exists.
    if (context === 'params') return sendProblem(reply, 'not_found', 'Nothing can exist at this path: an identifier or name in it is malformed.');
    const isQuery = context === 'querystring' || context === 'headers';
    return sendProblem(
      reply,
      isQuery ? 'invalid_query' : 'validation_failed',
      isQuery ? 'A query parameter is invalid.' : 'The request body is invalid.',
      fieldErrors(fe.validation, context),
    );
  }
  // Driver errors carry no HTTP status; one that does is the framework's (a client that went away mid-body is an
  // ECONNRESET with status 400, not a database outage).
  const outage = typeof fe.statusCode === 'number' ? null : classifyDatabaseError(error);
  if (outage) return databaseProblem(this, outage, error, request, reply);
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (mapped) return sendProblem(reply, mapped, fe.message);
  if (status >= 400 && status < 500) return sendProblem(reply, byStatus(status), fe.message);
  // Unknown failures: the log gets everything (with the request id), the client gets nothing internal.
  request.log.error({ err: error }, 'unhandled error');
  return sendProblem(reply, 'internal', 'Something went wrong on our side; quote the request id when reporting it.');
}

/** The router's limit on one path parameter: every identifier and name is far shorter. */
export const MAX_PARAM_LENGTH = 200;

const FRAMEWORK_DETAIL: Partial<Record<ErrorCode, string>> = {
  bad_request: 'The path is not valid percent-encoded UTF-8.',
  uri_too_long: 'A path segment is longer than any identifier or name can be.',
};

/**
 * Errors the router raises before any route or hook runs (a malformed percent-encoding, an over-long path
 * parameter): the same problem answer, headers set here since no onRequest hook has run.
 */
export const frameworkErrorHandler = (commonHeaders: (request: FastifyRequest, reply: FastifyReply) => void) =>
  function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    commonHeaders(request, reply);
    const code = FASTIFY_CODES[error.code];
    if (code) {
      sendProblem(reply, code, FRAMEWORK_DETAIL[code] ?? error.message);
      return;
    }
    errorHandler.call(request.server, error, request, reply);
  };

const CLIENT_ERRORS: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'header_too_large',
  // server.requestTimeout / headersTimeout: the request did not arrive in time (SVC_REQUEST_TIMEOUT_MS).
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
};
const CLIENT_ERROR_DETAIL: Partial<Record<ErrorCode, string>> = {
  header_too_large: 'The request headers are too large.',
  request_timeout: 'The request headers and body did not arrive in time.',
};

/**
 * Node's own HTTP parser rejects some requests (malformed, headers too large) before Fastify sees them.
 * They still get a problem+json answer with a request id.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // An answer already under way on this socket (say a 401 sent while the body still trickles in) cannot be
  // followed by another status line: the connection is just closed.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const code = CLIENT_ERRORS[err.code ?? ''] ?? 'bad_request';
  const requestId = newRequestId();
  const body = JSON.stringify(problemBody(code, CLIENT_ERROR_DETAIL[code] ?? 'The request could not be parsed as HTTP.', requestId));
  const status = ERRORS[code].status;
  socket.end(
    `HTTP/1.1 ${status} ${ERRORS[code].title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-ID: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
