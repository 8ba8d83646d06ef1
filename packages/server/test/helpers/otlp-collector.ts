import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP trace collector on 127.0.0.1 for tests: `POST /v1/traces` is decoded into spans, from the JSON encoding
 * or the protobuf one (decodeTraceRequest below: protobuf's wire format read by field numbers, written from
 * opentelemetry/proto's trace.proto, sharing nothing with svc's encoder). Every request is counted by its content type
 * and answered 200, as a collector that took everything does.
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
      if (type.startsWith('application/x-protobuf')) {
        collector.protobufRequests++;
        collector.spans.push(...decodeTraceRequest(Buffer.concat(chunks)));
      } else if (type.startsWith('application/json')) {
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

type Field = { field: number; wire: number; varint: bigint; bytes: Buffer };

/** Protobuf's wire format: each field's number, wire type and value (varints as bigint, the rest as bytes). */
function fieldsOf(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      // A message cut short is an encoder's bug: fail loudly rather than read past the end.
      if (pos >= buf.length) throw new Error('truncated protobuf: a varint runs past the end');
      const b = buf[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ field, wire, varint: varint(), bytes: Buffer.alloc(0) });
    else {
      const size = wire === 1 ? 8 : wire === 5 ? 4 : wire === 2 ? Number(varint()) : NaN;
      if (Number.isNaN(size)) throw new Error(`wire type ${wire} is not one OTLP uses`);
      if (pos + size > buf.length) throw new Error(`truncated protobuf: field ${field} needs ${size} bytes, ${buf.length - pos} left`);
      out.push({ field, wire, varint: 0n, bytes: buf.subarray(pos, pos + size) });
      pos += size;
    }
  }
  return out;
}

const only = (fields: Field[], n: number) => fields.filter((f) => f.field === n);

function anyValue(buf: Buffer): unknown {
  const [f] = fieldsOf(buf);
  if (!f) return undefined;
  switch (f.field) {
    case 1:
      return f.bytes.toString('utf8');
    case 2:
      return f.varint !== 0n;
    case 3:
      return Number(BigInt.asIntN(64, f.varint));
    case 4:
      return f.bytes.readDoubleLE(0);
    case 5:
      return only(fieldsOf(f.bytes), 1).map((v) => anyValue(v.bytes));
    default:
      return undefined;
  }
}

const keyValues = (fields: Field[], n: number): Record<string, unknown> =>
  Object.fromEntries(
    only(fields, n).map((kv) => {
      const parts = fieldsOf(kv.bytes);
      return [only(parts, 1)[0]!.bytes.toString('utf8'), anyValue(only(parts, 2)[0]?.bytes ?? Buffer.alloc(0))];
    }),
  );

/** An ExportTraceServiceRequest's spans (opentelemetry/proto/collector/trace/v1 and trace/v1 field numbers). */
export function decodeTraceRequest(body: Buffer): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const rs of only(fieldsOf(body), 1)) {
    const resourceSpans = fieldsOf(rs.bytes);
    const resource = only(resourceSpans, 1)[0];
    const serviceName = resource ? keyValues(fieldsOf(resource.bytes), 1)['service.name'] : undefined;
    for (const ss of only(resourceSpans, 2)) {
      for (const sp of only(fieldsOf(ss.bytes), 2)) {
        const span = fieldsOf(sp.bytes);
        const bytes = (n: number) => only(span, n)[0]?.bytes ?? Buffer.alloc(0);
        const status = only(span, 15)[0];
        spans.push({
          traceId: bytes(1).toString('hex'),
          spanId: bytes(2).toString('hex'),
          parentSpanId: bytes(4).toString('hex'),
          name: bytes(5).toString('utf8'),
          kind: Number(only(span, 6)[0]?.varint ?? 0n),
          attributes: keyValues(span, 9),
          statusCode: status ? Number(only(fieldsOf(status.bytes), 3)[0]?.varint ?? 0n) : 0,
          serviceName,
        });
      }
    }
  }
  return spans;
}
