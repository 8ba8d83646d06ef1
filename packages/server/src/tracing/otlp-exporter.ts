import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import type { IExportTraceServiceResponse, ISerializer } from '@opentelemetry/otlp-transformer';
import type { OtlpEncoding } from './otlp-encoding.js';
import type { BatchExporter, EncodedBatch } from './span-batches.js';

/**
 * The SDK's OTLP/HTTP exporter for batches span-batches.ts has already encoded: the same transport as
 * @opentelemetry/exporter-trace-otlp-proto and -http (with their OTEL_EXPORTER_OTLP_* headers, timeout, compression
 * and certificates, retries with backoff, and partial-success reports), given the request svc encoded instead of
 * spans to serialize. Only the serializer is svc's: it lays out the batch's bytes (otlp-encoding.ts), and reads the
 * collector's answer (below). @opentelemetry/otlp-transformer is not loaded at all: its index brings the metrics and
 * logs serializers and the metrics SDK, most of what a traced process would load.
 */
export function otlpExporter<T>(url: string, encoding: OtlpEncoding<T>): BatchExporter<T> {
  const serializer: ISerializer<EncodedBatch<T>, IExportTraceServiceResponse> = {
    serializeRequest: (batch) => encoding.request(batch.groups),
    deserializeResponse: encoding.contentType === 'application/json' ? jsonResponse : protobufResponse,
  };
  const delegate = createOtlpHttpExportDelegate(
    convertLegacyHttpOptions({ url }, 'TRACES', 'v1/traces', { 'Content-Type': encoding.contentType }),
    serializer,
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.count },
    undefined,
  );
  return new OTLPExporterBase(delegate);
}

/**
 * The collector's ExportTraceServiceResponse: only its partial success matters (the SDK's transport logs it). An
 * answer that cannot be read is an empty one, as the SDK's own deserializers treat it.
 */
function jsonResponse(body: Uint8Array): IExportTraceServiceResponse {
  if (body.length === 0) return {};
  try {
    return JSON.parse(Buffer.from(body).toString('utf8')) as IExportTraceServiceResponse;
  } catch {
    return {};
  }
}

function protobufResponse(body: Uint8Array): IExportTraceServiceResponse {
  try {
    const partial = protobufFields(Buffer.from(body)).find((f) => f.field === 1 && f.bytes);
    if (!partial?.bytes) return {};
    const result: { rejectedSpans?: number; errorMessage?: string } = {};
    for (const f of protobufFields(partial.bytes)) {
      if (f.field === 1 && f.value !== undefined) result.rejectedSpans = f.value;
      if (f.field === 2 && f.bytes) result.errorMessage = f.bytes.toString('utf8');
    }
    return { partialSuccess: result };
  } catch {
    return {};
  }
}

/** Protobuf's wire format, one level: varints as numbers, length-delimited fields as bytes, fixed ones skipped. */
function protobufFields(buf: Buffer): Array<{ field: number; value?: number; bytes?: Buffer }> {
  const out: Array<{ field: number; value?: number; bytes?: Buffer }> = [];
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    for (let scale = 1; ; scale *= 128) {
      if (pos >= buf.length) throw new RangeError('truncated varint');
      const b = buf[pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push({ field, value: varint() });
    else if (wire === 2) {
      const size = varint();
      if (pos + size > buf.length) throw new RangeError('truncated field');
      out.push({ field, bytes: buf.subarray(pos, pos + size) });
      pos += size;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else throw new RangeError(`wire type ${wire}`);
  }
  return out;
}
