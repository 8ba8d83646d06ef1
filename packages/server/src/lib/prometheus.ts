/**
 * prom-client, without its index (see prom-client-parts.d.ts): the metric classes and the registry every process
 * uses. The default metrics are loaded by the one process that serves /metrics (http/metrics.ts), when it does.
 */
export { default as Registry } from 'prom-client/lib/registry.js';
export { default as Counter } from 'prom-client/lib/counter.js';
export { default as Gauge } from 'prom-client/lib/gauge.js';
export { default as Histogram } from 'prom-client/lib/histogram.js';
