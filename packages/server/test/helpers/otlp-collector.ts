import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP trace collector on 127.0.0.1 for tests: `POST /v1/traces` with the JSON encoding is decoded into
 * spans; protobuf requests are only counted (by content type), which is enough to show that exporter is the one
 * in use. Every request is answered 200 with an empty JSON object, as a collector that took everything does.
 */

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  serviceName: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

const valueOf = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? v.arrayValue?.values?.map(valueOf);

const attributesOf = (list: OtlpAttribute[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

export interface OtlpCollector {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: CollectedSpan[];
  jsonRequests: number;
  protobufRequests: number;
  /** Request paths in order (the exporter's /v1/traces). */
  paths: string[];
  close(): Promise<void>;
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const collector: Omit<OtlpCollector, 'url' | 'close'> = { spans: [], jsonRequests: 0, protobufRequests: 0, paths: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      collector.paths.push(req.url ?? '');
      const type = req.headers['content-type'] ?? '';
      if (type.startsWith('application/x-protobuf')) collector.protobufRequests++;
      else if (type.startsWith('application/json')) {
        collector.jsonRequests++;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: Array<{
            resource?: { attributes?: OtlpAttribute[] };
            scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[]; status?: { code?: number } }> }>;
          }>;
        };
        for (const rs of body.resourceSpans ?? []) {
          const serviceName = attributesOf(rs.resource?.attributes)['service.name'];
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              collector.spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
                attributes: attributesOf(s.attributes),
                statusCode: s.status?.code ?? 0,
                serviceName,
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': type.startsWith('application/x-protobuf') ? 'application/x-protobuf' : 'application/json' });
      res.end(type.startsWith('application/x-protobuf') ? undefined : '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(collector, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as OtlpCollector;
}
