import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import cookie from '@fastify/cookie';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import swagger from '@fastify/swagger';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Registry } from './lib/prometheus.js';
import type { Context } from './context.js';
import { AppError } from './errors.js';
import { adminAuthHook, documentAdminTokenSecurity } from './http/auth.js';
import { publicRoutes } from './http/bearer-auth.js';
import { registerJsonParser } from './http/json-body.js';
import { createRegistry, registerFeedMetrics, registerHttpMetrics } from './http/metrics.js';
import { registerNotFound } from './http/not-found.js';
import { allowAbsent, isOptionalBody, trackOptionalBodies, type Validate } from './http/optional-body.js';
import { corsHeaders } from './http/cors.js';
import { MAX_PARAM_LENGTH, clientErrorHandler, errorHandler, frameworkErrorHandler } from './http/problems.js';
import { requestIdFor } from './http/request-id.js';
import { installResponseCheck } from './http/response-check.js';
import { securityHeaders } from './http/security-headers.js';
import { registerTracingHooks } from './http/tracing-hooks.js';
import { tracing } from './tracing/tracing.js';
import { adminAdminRoutes } from './http/routes/admin-admins.js';
import { adminAdminTokenRoutes } from './http/routes/admin-admin-tokens.js';
import { adminBrokerRoutes } from './http/routes/admin-brokers.js';
import { adminCollectionRoutes } from './http/routes/admin-collections.js';
import { adminDeliveryRoutes } from './http/routes/admin-deliveries.js';
import { adminSessionRoutes } from './http/routes/admin-session.js';
import { adminTokenRoutes } from './http/routes/admin-tokens.js';
import { adminUiRoutes } from './http/routes/admin-ui.js';
import { adminWebhookRoutes } from './http/routes/admin-webhooks.js';
import { adminWebhookHealthRoutes } from './http/routes/admin-webhook-health.js';
import { adminOpenApiRoute, discoveryRoutes } from './http/routes/discovery.js';
import { healthRoutes } from './http/routes/health.js';
import { recordRoutes } from './http/routes/records.js';
import { batchRoutes } from './http/routes/batch.js';
import { adminEventRoutes } from './http/routes/admin-events.js';
import { eventRoutes } from './http/routes/events.js';
import { adminTokenOwner, sessionOwner, tokenOwner } from './http/feed-answers.js';
import { createFeedRuntime } from './events/feed-runtime.js';
import { SHARED_SCHEMAS } from './http/schemas.js';
import type { StreamTiming } from './events/stream-fanout.js';
import { redactUrl } from './lib/redact-url.js';
import { createOutbox } from './webhooks/outbox.js';
import type { JobHandoff } from './webhooks/queue/enqueue.js';

export interface AppOptions {
  registry?: Registry;
  /** This process's delivery worker, which takes the jobs of this process's writes (runtime.ts wires it). */
  handoff?: JobHandoff | null;
  /** Tests shorten the event streams' ping and re-check intervals. */
  streamTiming?: StreamTiming;
  /** Tests: collect responses that do not match their documented schema. */
  responseViolations?: string[];
}

/**
 * Two validators: bodies are strict (no coercion, no silent removal of unknown fields); query strings coerce.
 * `checkSchemas`: each schema is checked against JSON Schema's meta-schema as it is added or compiled. The apps the
 * tests build check (a malformed schema fails the route's first request there); a running svc does not, since
 * compiling the meta-schema in both validators was 96 ms of every `svc serve` start for schemas that never change.
 */
function validators(checkSchemas: boolean) {
  const common = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false, validateSchema: checkSchemas } as const;
  const body = new Ajv.default({ ...common, coerceTypes: false });
  const query = new Ajv.default({ ...common, coerceTypes: 'array' });
  for (const ajv of [body, query]) {
    addFormats.default(ajv);
    for (const s of SHARED_SCHEMAS) ajv.addSchema(s);
  }
  return { body, query };
}

/**
 * A route's validator compiled on its first request, not at start-up: ajv compiling every route's schemas was 265 of
 * `svc serve`'s ~1,080 ms to the "svc started" line (a CPU profile), and a worker-and-API process answers most routes
 * rarely or never. The same validator, the same errors; a route pays its compile once (the openapi-fuzz and contract
 * suites send every route's schemas through it).
 */
function compiledOnFirstUse(compile: () => Validate): Validate {
  let validate: Validate | null = null;
  const first: Validate = (data) => {
    validate ??= compile();
    const ok = validate(data);
    first.errors = validate.errors;
    return ok;
  };
  return first;
}

/**
 * Response serializers (fast-json-stringify) built on a route's first answer with that status, not at start-up:
 * building all of them up front was a third of the time to /readyz. The output is the same; a route pays its
 * build once, on first use.
 */
function lazySerializers(): SerializerFactory {
  const eager = SerializerSelector();
  return (external, options) => {
    const compile = eager(external, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | null = null;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}

/** Fastify takes a hop count too, but its types do not say so: as a function it is the same rule, typed. */
function trustProxyOption(trust: Context['config']['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return typeof trust === 'boolean' ? trust : [...trust];
}

/**
 * Node's close() waits for every connection that has not finished a request, including one that never sent any
 * (a client's pool opened it, then dropped the request it was for): that would hold a shutdown until the headers
 * timeout. Once the streams have ended, connections with no request in flight are closed.
 */
function dropQuietConnectionsOnClose(app: FastifyInstance): () => void {
  const inFlight = new Map<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    response.once('close', () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1));
  });
  return () => {
    for (const [socket, n] of inFlight) if (n === 0) socket.destroy();
  };
}

/**
 * Whether the query string is valid percent-encoded UTF-8. The query parser takes a malformed escape (`%ZZ`, a lone
 * `%`, bytes that are not UTF-8) as literal text, so a filter would fail later with a misleading position; SPEC
 * calls it `bad_request`, as the router does for the path.
 */
function wellEncodedQuery(url: string): boolean {
  const q = url.indexOf('?');
  if (q < 0 || url.indexOf('%', q) < 0) return true;
  try {
    decodeURIComponent(url.slice(q + 1));
    return true;
  } catch {
    return false;
  }
}

/** Builds the HTTP app; never listens (tests use inject or listen themselves). */
export async function buildApp(ctx: Context, options: AppOptions = {}): Promise<FastifyInstance> {
  const security = securityHeaders(ctx.config.publicUrl);
  const cors = corsHeaders(ctx.config.corsOrigins);
  const { requestTimeoutMs, trustProxy } = ctx.config;
  // Headers every answer carries, also the ones the router sends before any hook runs.
  const commonHeaders = (request: FastifyRequest, reply: FastifyReply): 'preflight' | 'continue' => {
    reply.header('x-request-id', request.id).headers(security);
    // Admin answers carry sessions, CSRF tokens, API tokens and signing secrets: no cache may keep any of them.
    if (request.url.startsWith('/admin/v1/')) reply.header('cache-control', 'no-store');
    return cors(request, reply);
  };
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    // One line per request is written in onResponse below; the built-in pair of lines is off.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: requestIdFor,
    bodyLimit: ctx.config.bodyMaxBytes,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler(commonHeaders),
    // Whole request (headers and body) within the limit, else 408 through clientErrorHandler. A GET stream or
    // long-poll is complete once its headers are in, so it is not cut off later.
    requestTimeout: requestTimeoutMs,
    // Node checks for late requests only this often (default 30 s), and refuses a headers timeout above the
    // request timeout.
    http: { connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(requestTimeoutMs / 4))), headersTimeout: requestTimeoutMs, requestTimeout: requestTimeoutMs },
    trustProxy: trustProxyOption(trustProxy),
    // Answered by the onRequest hook below instead, as a problem with a request id.
    return503OnClosing: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: false },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  });

  const ajv = validators(options.responseViolations !== undefined);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    compiledOnFirstUse(() => {
      if (httpPart !== 'body') return ajv.query.compile(schema as object);
      const validate = ajv.body.compile(schema as object);
      return isOptionalBody(schema as object) ? allowAbsent(validate) : validate;
    }),
  );
  for (const s of SHARED_SCHEMAS) app.addSchema(s);
  const markOptionalBodies = trackOptionalBodies(app);
  app.decorateRequest('auth', null as never);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // The app-wide hooks take a callback rather than being async: they run on every request, and an async hook
  // costs a promise and a trip through the microtask queue each time.
  app.addHook('onRequest', (request, reply, done) => {
    request.auth = {};
    // A CORS preflight is answered here, before routing: no route has OPTIONS, and no credentials are asked.
    if (commonHeaders(request, reply) === 'preflight') return void reply.code(204).send();
    // Requests still arriving on open connections while the process drains: a problem answer, not Fastify's own.
    if (closing) return void done(new AppError('unavailable', 'This process is shutting down; try again.', { headers: { connection: 'close' } }));
    if (!wellEncodedQuery(request.url)) return void done(new AppError('bad_request', 'The query string is not valid percent-encoded UTF-8.'));
    done();
  });
  // Errors raised before onRequest (parser, 404 with a body) still carry the id.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!reply.hasHeader('x-request-id')) reply.header('x-request-id', request.id);
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const level = reply.statusCode >= 500 ? 'error' : 'info';
    request.log[level]({ method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
    done();
  });
  // Server spans, only when tracing is on (SPEC §15).
  registerTracingHooks(app);
  app.setErrorHandler(errorHandler);
  if (options.responseViolations) installResponseCheck(app, options.responseViolations);
  registerNotFound(app);
  registerJsonParser(app, ctx.config.jsonMaxDepth);

  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc',
        version: '1.0.0',
        description: 'Records in collections, and signed webhooks for every committed change.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: ctx.config.publicUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token `svc_pat_…` created by an admin.' },
          adminSession: { type: 'apiKey', in: 'cookie', name: 'svc_admin', description: 'Set by POST /admin/v1/session.' },
          csrfToken: { type: 'apiKey', in: 'header', name: 'X-Svc-CSRF', description: 'The csrfToken of the same session.' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'An admin token `svcadm_…` (POST /admin/v1/admin-tokens); each operation names the scope it needs.' },
        },
      },
    },
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      markOptionalBodies(document.openapiObject);
      return document.openapiObject;
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });

  const registry = options.registry ?? (await createRegistry());
  registerHttpMetrics(app, registry);

  await app.register(healthRoutes(ctx, registry));
  await app.register(discoveryRoutes(ctx));
  const outbox = createOutbox(ctx.database, ctx.logger, options.handoff ?? null, tracing());
  const feed = createFeedRuntime(ctx, options.streamTiming);
  registerFeedMetrics(registry, { waitingPolls: () => feed.waits.total, openStreams: () => feed.fanout.openStreams });
  const dropQuiet = dropQuietConnectionsOnClose(app);
  app.addHook('preClose', async () => {
    await feed.close();
    dropQuiet();
  });
  // Every token-guarded route behind one hook (http/bearer-auth.ts).
  await app.register(
    publicRoutes(ctx, async (api) => {
      await api.register(recordRoutes(ctx, outbox));
      await api.register(batchRoutes(ctx, outbox));
      await api.register(eventRoutes(ctx, feed));
    }),
  );
  await app.register(async (admin) => {
    admin.addHook('onRequest', adminAuthHook(ctx));
    admin.addHook('onRoute', documentAdminTokenSecurity);
    await admin.register(adminSessionRoutes(ctx, (idHash) => feed.fanout.recheckOwner(sessionOwner(idHash))));
    await admin.register(adminAdminRoutes(ctx, (idHash) => feed.fanout.recheckOwner(sessionOwner(idHash))));
    await admin.register(adminCollectionRoutes(ctx, outbox));
    await admin.register(adminTokenRoutes(ctx, (id) => feed.fanout.recheckOwner(tokenOwner(id))));
    await admin.register(adminAdminTokenRoutes(ctx, (id) => feed.fanout.recheckOwner(adminTokenOwner(id))));
    await admin.register(adminWebhookRoutes(ctx, outbox));
    await admin.register(adminWebhookHealthRoutes(ctx));
    await admin.register(adminBrokerRoutes(ctx));
    await admin.register(adminDeliveryRoutes(ctx));
    await admin.register(adminEventRoutes(ctx, feed));
    await admin.register(adminOpenApiRoute(ctx));
  });
  await app.register(adminUiRoutes);
  return app;
}
