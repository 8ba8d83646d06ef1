import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startTracing, tracing, type Tracing } from '../../src/tracing/tracing.js';
import { startOtlpCollector, type OtlpCollector } from '../helpers/otlp-collector.js';
import { waitFor } from '../helpers/wait.js';

/** The batch processor's OTEL_BSP_* variables take effect, and what the exporter reports reaches the log readably. */
describe('tracing: the batch processor and the exporter\'s reports', () => {
  let tracer: Tracing | null = null;
  let collector: OtlpCollector | null = null;
  let refusing: Server | null = null;
  const lines: Array<Record<string, unknown>> = [];
  const logger = () =>
    pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    );

  afterEach(async () => {
    await tracer?.shutdown();
    await collector?.close();
    await new Promise((resolve) => (refusing ? refusing.close(resolve) : resolve(undefined)));
    tracer = collector = refusing = null;
    lines.length = 0;
  });

  const oneSpan = () => tracing()!.inSpan('svc.transaction', null, async () => {});

  it('OTEL_BSP_SCHEDULE_DELAY sends a partial batch after that delay, not the default 5 s', async () => {
    collector = await startOtlpCollector();
    tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' }, logger());
    const started = performance.now();
    await oneSpan();
    await waitFor(() => collector!.spans.length === 1, 'the span at the collector', 4000);
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('OTEL_BSP_MAX_EXPORT_BATCH_SIZE cuts the batches', async () => {
    collector = await startOtlpCollector();
    tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2' }, logger());
    for (let i = 0; i < 5; i++) await oneSpan();
    // Two full batches go at once; the fifth span waits for the (default) delay or the stop's flush.
    await waitFor(() => collector!.jsonRequests >= 2, 'two full batches');
    await tracer.shutdown();
    tracer = null;
    expect(collector.spans).toHaveLength(5);
    expect(collector.jsonRequests).toBe(3);
  });

  it('logs the endpoint without its credentials, and a failed export with its reason', async () => {
    // A collector that answers every export with 400 (not retried by the exporter), reached with a user and password.
    refusing = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end('{"code":3,"message":"refused by the test"}'));
    });
    await new Promise<void>((resolve) => refusing!.listen(0, '127.0.0.1', resolve));
    const port = (refusing.address() as AddressInfo).port;
    tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://user:hunter2-secret@127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '0' }, logger());
    const on = lines.find((l) => l.msg === 'tracing on');
    expect(on?.endpoint).toBe(`http://***@127.0.0.1:${port}/v1/traces`);
    await oneSpan();
    const failed = await waitFor(() => lines.find((l) => l.msg === 'span export failed'), 'the failed export in the log');
    expect(failed.component).toBe('tracing');
    const [detail] = failed.detail as Array<{ type?: string; message?: string }>;
    expect(detail?.message).toMatch(/400|Bad Request/);
    expect(JSON.stringify(lines)).not.toContain('hunter2-secret');
  });
});
