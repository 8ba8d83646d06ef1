import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startOtlpCollector } from '../helpers/otlp-collector.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'svc-tracing-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A module hook that writes down every OpenTelemetry and broker client module the process resolves, then a whole svc
// process (API and worker, through runtime.ts as `svc serve` starts it) that answers a request and stops.
const HOOK = join(dir, 'hook.mjs');
writeFileSync(
  HOOK,
  `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (/\\/(@opentelemetry|@nats-io|amqplib|redis|@redis)\\//.test(result.url)) appendFileSync(process.env.OTEL_MODULE_LOG, result.url + '\\n');
  return result;
}`,
);
const SCRIPT = join(dir, 'serve.mts');
writeFileSync(
  SCRIPT,
  `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(HOOK).href)});
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(join(SRC, 'config/load.ts')).href)});
const { openContext, startProcess } = await import(${JSON.stringify(pathToFileURL(join(SRC, 'runtime.ts')).href)});
const config = loadConfig({ SVC_DATABASE_URL: 'sqlite:' + process.env.DB, SVC_PORT: '0', SVC_SECRET_KEY: 'ab'.repeat(32), SVC_LOG_LEVEL: 'error' });
const ctx = await openContext(config);
const running = await startProcess(ctx, { api: true, worker: true });
const res = await fetch(running.url + '/readyz', { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
await running.stop();
process.stdout.write('\\nstatus=' + res.status + '\\n');
`,
);

function serve(name: string, env: Record<string, string>): Promise<{ status: string; modules: string[] }> {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_') && !k.startsWith('OTEL_')));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { env: { ...clean, ...env, OTEL_MODULE_LOG: log, DB: join(dir, `${name}.db`) }, cwd: SRC });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`exited ${code}: ${stderr}`));
      resolve({ status: /status=(\d+)/.exec(stdout)?.[1] ?? stdout, modules: readFileSync(log, 'utf8').split('\n').filter(Boolean) });
    });
  });
}

describe('tracing and broker clients are loaded lazily', () => {
  it('without OTEL_* variables no OpenTelemetry module is resolved while svc starts, answers a request and stops', async () => {
    const off = await serve('off', {});
    expect(off.status).toBe('200');
    expect(off.modules).toEqual([]);
  }, 120_000);

  it('without SVC_BROKERS no broker client (NATS, RabbitMQ, Redis) is loaded either', async () => {
    // The same process as above; the clients are loaded by the broker pool only for the kinds SVC_BROKERS names.
    const off = await serve('no-brokers', {});
    expect(off.status).toBe('200');
    expect(off.modules.filter((m) => /\/(@nats-io|amqplib|redis|@redis)\//.test(m))).toEqual([]);
  }, 120_000);

  it('with an endpoint the SDK and the OTLP/HTTP transport load, and the stop exports the spans (protobuf, decoded)', async () => {
    const collector = await startOtlpCollector();
    try {
      const on = await serve('on', { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
      expect(on.status).toBe('200');
      expect(on.modules.some((m) => m.includes('/@opentelemetry/sdk-trace-node/'))).toBe(true);
      expect(on.modules.some((m) => m.includes('/@opentelemetry/otlp-exporter-base/'))).toBe(true);
      // Protobuf by default; the request's server span, in the trace its traceparent named.
      expect(collector.protobufRequests).toBeGreaterThan(0);
      expect(collector.jsonRequests).toBe(0);
      expect(collector.spans).toContainEqual(
        expect.objectContaining({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentSpanId: '00f067aa0ba902b7', kind: 2, name: 'GET /readyz', serviceName: 'svc' }),
      );
    } finally {
      await collector.close();
    }
  }, 120_000);

  it('a bad value stops the start naming the variable', async () => {
    await expect(serve('bad', { OTEL_TRACES_SAMPLER: 'sometimes' })).rejects.toThrow(/OTEL_TRACES_SAMPLER/);
  }, 120_000);
});
