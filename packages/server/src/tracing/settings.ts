import { ConfigError } from '../config/schema.js';

/**
 * The standard OpenTelemetry variables svc reads (SPEC §15). They are read here, not in config/schema.ts: they are
 * OTEL_*, not SVC_*, and the SDK's own documentation describes them. Parsing them loads nothing of OpenTelemetry.
 */

export type Sampler = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';
const SAMPLERS: readonly Sampler[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

export interface TracingSettings {
  /** Where spans are posted: the traces endpoint as given, or the base endpoint with /v1/traces. */
  readonly url: string;
  readonly protocol: 'http/protobuf' | 'http/json';
  readonly serviceName: string;
  readonly sampler: Sampler;
  /** The ratio of the traceidratio samplers (1 when unset). */
  readonly ratio: number;
  /** The span limits svc applies (the SDK's defaults: 128 attributes, values uncut). */
  readonly limits: { readonly attributeCountLimit: number; readonly attributeValueLengthLimit: number };
  /** The batch processor's settings (OTEL_BSP_*; the SDK's defaults: 512, 2,048, 5 s, 30 s). */
  readonly batches: BatchSettings;
}

/** span-batches.ts SpanBatchLimits: a batch's spans, spans waiting, a partial batch's wait and an export's time (ms). */
export interface BatchSettings {
  readonly maxBatch: number;
  readonly maxQueued: number;
  readonly delayMs: number;
  readonly exportTimeoutMs: number;
}

/** Every variable this reads, for the docs and the README's table. */
export const TRACING_VARIABLES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_SDK_DISABLED',
  'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
] as const;

type Env = Readonly<Record<string, string | undefined>>;

const set = (env: Env, name: string): string | null => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? null : v;
};

function httpUrl(name: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `"${raw.replace(/\/\/[^/@]*@/, '//***@')}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, 'must be an http: or https: URL (svc exports over OTLP/HTTP)');
  return url;
}

/** The first of the variables that is set, as a whole number from `min` to `max`; `fallback` when none is. */
function limit(env: Env, names: readonly string[], min: 0 | 1, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  for (const name of names) {
    const raw = set(env, name);
    if (raw === null) continue;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
      throw new ConfigError(name, `must be a whole number ${range}, got "${raw}"`);
    }
    return Number(raw);
  }
  return fallback;
}

/** The longest timer Node keeps (a longer one fires after 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The settings, or null when tracing is off: no endpoint, or OTEL_SDK_DISABLED=true. A bad value throws ConfigError
 * naming the variable, as SVC_* settings do; the other variables are still checked when no endpoint is set, so a
 * typo does not wait for the day someone sets one.
 */
export function tracingSettings(env: Env): TracingSettings | null {
  const disabled = set(env, 'OTEL_SDK_DISABLED');
  if (disabled !== null && !/^(true|false)$/i.test(disabled)) throw new ConfigError('OTEL_SDK_DISABLED', `must be true or false, got "${disabled}"`);

  const protocolRaw = set(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocolRaw !== 'http/protobuf' && protocolRaw !== 'http/json') {
    const grpc = /grpc/i.test(protocolRaw) ? ' (svc has no gRPC exporter)' : '';
    throw new ConfigError('OTEL_EXPORTER_OTLP_PROTOCOL', `must be http/protobuf or http/json, got "${protocolRaw}"${grpc}`);
  }

  const samplerRaw = (set(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  const sampler = SAMPLERS.find((s) => s === samplerRaw);
  if (!sampler) throw new ConfigError('OTEL_TRACES_SAMPLER', `must be one of ${SAMPLERS.join(', ')}, got "${samplerRaw}"`);
  const argRaw = set(env, 'OTEL_TRACES_SAMPLER_ARG');
  let ratio = 1;
  if (argRaw !== null && sampler.endsWith('traceidratio')) {
    ratio = Number(argRaw);
    if (!/^\d*\.?\d+$/.test(argRaw) || !(ratio >= 0 && ratio <= 1)) throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1, got "${argRaw}"`);
  }

  const serviceName = set(env, 'OTEL_SERVICE_NAME') ?? 'svc';

  const traces = set(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = set(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  let url: string | null = null;
  // The signal-specific endpoint is used as given; the base one gets the signal's path (the OTLP exporter spec).
  if (traces !== null) url = httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces).href;
  else if (base !== null) url = `${httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base).href.replace(/\/$/, '')}/v1/traces`;

  // The span-specific limit first, then the general one (the SDK's order); svc passes them to the SDK itself, so every
  // span, the attempts' own included, has the same limits.
  const limits = Object.freeze({
    attributeCountLimit: limit(env, ['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'], 0, 128),
    attributeValueLengthLimit: limit(env, ['OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'], 1, Infinity),
  });

  // The batch processor's variables, with the SDK's defaults. A timeout of 0 is no limit (the specification's rule for
  // timeouts). A batch fits the queue: with no batch size set, the default is cut to a smaller queue, as the SDK cuts
  // it; a batch size set larger than the queue stops the start (the SDK would warn and cut it).
  const maxQueued = limit(env, ['OTEL_BSP_MAX_QUEUE_SIZE'], 1, 2048);
  const exportTimeoutMs = limit(env, ['OTEL_BSP_EXPORT_TIMEOUT'], 0, 30_000, MAX_TIMER_MS);
  const batches = Object.freeze({
    delayMs: limit(env, ['OTEL_BSP_SCHEDULE_DELAY'], 0, 5000, MAX_TIMER_MS),
    exportTimeoutMs: exportTimeoutMs === 0 ? Infinity : exportTimeoutMs,
    maxQueued,
    maxBatch: limit(env, ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE'], 1, Math.min(512, maxQueued)),
  });
  if (batches.maxBatch > maxQueued) {
    throw new ConfigError('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', `must be at most OTEL_BSP_MAX_QUEUE_SIZE (${maxQueued}), got "${batches.maxBatch}"`);
  }

  if (url === null || disabled?.toLowerCase() === 'true') return null;
  return Object.freeze({ url, protocol: protocolRaw, serviceName, sampler, ratio, limits, batches });
}

/** The endpoint as a log line may show it: its user name and password, if it has them, as `***`. */
export function endpointForLog(url: string): string {
  const u = new URL(url);
  if (u.username === '' && u.password === '') return url;
  u.username = '***';
  u.password = '';
  return u.href;
}
