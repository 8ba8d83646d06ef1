import type { Logger } from 'pino';
import { endpointForLog, tracingSettings } from './settings.js';
import type { TraceHeaders, TracingRuntime } from './types.js';

export type { RequestSpan, TraceHeaders, TracingRuntime } from './types.js';

/**
 * svc's one door to OpenTelemetry (SPEC §15). Nothing here imports it: `startTracing` loads ./otel.js (and with it
 * the SDK and an exporter) with a dynamic import() only when an endpoint is configured. Until then `tracing()` is
 * null: the HTTP hooks are not registered (http/tracing-hooks.ts) and the write path's outbox has no tracer, so a
 * process without OTEL_* variables pays nothing and sends no traceparent anywhere.
 */

let active: TracingRuntime | null = null;

/** The loaded runtime, or null when tracing is off. */
export const tracing = (): TracingRuntime | null => active;

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is still batched and stops; a process calls it last (runtime.ts `stop()`). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: async () => {} };

/**
 * Starts tracing from the OTEL_* variables, or does nothing when none names an endpoint (or OTEL_SDK_DISABLED is
 * true). A bad value throws ConfigError naming the variable. One process has one tracer provider: a second start
 * while one runs is a no-op (tests start one before the app they trace).
 */
export async function startTracing(env: Readonly<Record<string, string | undefined>>, logger: Logger): Promise<Tracing> {
  const settings = tracingSettings(env);
  if (settings === null || active !== null) return OFF;
  const { createOtelRuntime } = await import('./otel.js');
  const runtime = await createOtelRuntime(settings, logger);
  active = runtime;
  logger.info({ endpoint: endpointForLog(settings.url), protocol: settings.protocol, sampler: settings.sampler, ratio: settings.ratio }, 'tracing on');
  return {
    enabled: true,
    async shutdown() {
      if (active === runtime) active = null;
      await runtime.shutdown();
    },
  };
}
