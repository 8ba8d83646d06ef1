import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/schema.js';
import { endpointForLog, tracingSettings } from '../../src/tracing/settings.js';

const failure = (env: Record<string, string>): ConfigError => {
  try {
    tracingSettings(env);
  } catch (err) {
    return err as ConfigError;
  }
  throw new Error('no error');
};

describe('OTEL_* settings', () => {
  it('are off without an endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(tracingSettings({})).toBeNull();
    expect(tracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeNull();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
  });

  it('take the standard defaults', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' })).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'svc',
      sampler: 'parentbased_always_on',
      ratio: 1,
      limits: { attributeCountLimit: 128, attributeValueLengthLimit: Infinity },
      batches: { maxBatch: 512, maxQueued: 2048, delayMs: 5000, exportTimeoutMs: 30_000 },
    });
  });

  it('read the batch processor\'s OTEL_BSP_* variables', () => {
    const s = tracingSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_BSP_SCHEDULE_DELAY: '0',
      OTEL_BSP_EXPORT_TIMEOUT: '2500',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100',
    });
    expect(s?.batches).toEqual({ maxBatch: 100, maxQueued: 100, delayMs: 0, exportTimeoutMs: 2500 });
    // A queue smaller than the default batch cuts the batch, as the SDK does; a timeout of 0 is no limit.
    const small = tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_EXPORT_TIMEOUT: '0' });
    expect(small?.batches).toEqual({ maxBatch: 100, maxQueued: 100, delayMs: 5000, exportTimeoutMs: Infinity });
  });

  it('never print the endpoint\'s credentials, even of a URL they refuse', () => {
    const e = failure({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://user:hunter2@exa mple:4318' });
    expect(e.variable).toBe('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(e.message).not.toContain('hunter2');
  });

  it('keep the endpoint\'s user name and password out of what is logged', () => {
    expect(endpointForLog('http://user:secret@127.0.0.1:4318/v1/traces')).toBe('http://***@127.0.0.1:4318/v1/traces');
    expect(endpointForLog('https://token@collector.example:4318/v1/traces')).toBe('https://***@collector.example:4318/v1/traces');
    expect(endpointForLog('http://127.0.0.1:4318/v1/traces')).toBe('http://127.0.0.1:4318/v1/traces');
  });

  it('name gRPC only for a gRPC protocol', () => {
    expect(failure({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).message).toMatch(/no gRPC exporter/);
    expect(failure({ OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON' }).message).not.toMatch(/gRPC/);
  });

  it('read the span limits, the span-specific variable before the general one', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(tracingSettings({ ...base, OTEL_ATTRIBUTE_COUNT_LIMIT: '10', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '64' })?.limits).toEqual({ attributeCountLimit: 10, attributeValueLengthLimit: 64 });
    expect(
      tracingSettings({ ...base, OTEL_ATTRIBUTE_COUNT_LIMIT: '10', OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '0', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '64', OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '8' })?.limits,
    ).toEqual({ attributeCountLimit: 0, attributeValueLengthLimit: 8 });
  });

  it('use the traces endpoint as given, before the base one', () => {
    const s = tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/custom' });
    expect(s?.url).toBe('http://127.0.0.1:4318/custom');
  });

  it('read protocol, service name and a ratio sampler', () => {
    const s = tracingSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'svc-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    expect(s).toMatchObject({ protocol: 'http/json', serviceName: 'svc-eu', sampler: 'parentbased_traceidratio', ratio: 0.25 });
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_SDK_DISABLED: 'yes' }, 'OTEL_SDK_DISABLED'],
    [{ OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '-1' }, 'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT'],
    [{ OTEL_ATTRIBUTE_COUNT_LIMIT: 'many' }, 'OTEL_ATTRIBUTE_COUNT_LIMIT'],
    [{ OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '0' }, 'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT'],
    [{ OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '1.5' }, 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '127.0.0.1:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://127.0.0.1/x' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    [{ OTEL_BSP_SCHEDULE_DELAY: '-5' }, 'OTEL_BSP_SCHEDULE_DELAY'],
    [{ OTEL_BSP_EXPORT_TIMEOUT: '3000000000' }, 'OTEL_BSP_EXPORT_TIMEOUT'],
    [{ OTEL_BSP_SCHEDULE_DELAY: '2147483648' }, 'OTEL_BSP_SCHEDULE_DELAY'],
    [{ OTEL_BSP_MAX_QUEUE_SIZE: '1e3' }, 'OTEL_BSP_MAX_QUEUE_SIZE'],
    [{ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '0' }, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'],
    [{ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '101' }, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'],
  ])('refuse %j naming %s, with or without an endpoint', (env, variable) => {
    for (const withEndpoint of [false, true]) {
      const e = failure({ ...(withEndpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' } : {}), ...env });
      expect(e).toBeInstanceOf(ConfigError);
      expect(e.variable).toBe(variable);
    }
  });
});
