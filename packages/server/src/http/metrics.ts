import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from '../lib/prometheus.js';
import { DATABASE_ERROR_KINDS, type DatabaseErrorKind } from '../db/database-errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a request answered 503/507 because of the database (problems.ts); set by registerHttpMetrics. */
    countDatabaseError?: (kind: DatabaseErrorKind) => void;
  }
}

/** One registry per app instance (never the global one), so tests can build many apps in one process. */
export async function createRegistry(): Promise<Registry> {
  const registry = new Registry();
  const { default: collectDefaultMetrics } = await import('prom-client/lib/defaultMetrics.js');
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  return registry;
}

export function registerHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const databaseErrors = new Counter({
    name: 'svc_database_errors_total',
    help: 'Requests answered 503 unavailable or 507 storage_full because the database could not be reached or was full, by kind',
    labelNames: ['kind'],
    registers: [registry],
  });
  // Every kind from the start at 0: an alert on the rate sees the series before the first outage.
  for (const kind of DATABASE_ERROR_KINDS) databaseErrors.labels(kind).inc(0);
  app.decorate('countDatabaseError', (kind: DatabaseErrorKind) => databaseErrors.labels(kind).inc());
  // A callback hook, not an async one: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    // The pattern, never the raw URL: ids in paths would explode the label set.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}

/** What the feed holds open in this process, read at scrape time. */
export function registerFeedMetrics(registry: Registry, feed: { waitingPolls(): number; openStreams(): number }): void {
  new Gauge({
    name: 'svc_feed_long_polls_waiting',
    help: 'Long-polls of the event feed waiting in this process (each holds one of its token\'s SVC_LONG_POLLS_PER_TOKEN places)',
    registers: [registry],
    collect() {
      this.set(feed.waitingPolls());
    },
  });
  new Gauge({
    name: 'svc_feed_streams_open',
    help: 'Event streams (Server-Sent Events) open in this process',
    registers: [registry],
    collect() {
      this.set(feed.openStreams());
    },
  });
}
