import { diag, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { OtlpEncoding, SpanGroup } from './otlp-encoding.js';
import type { BatchSettings } from './settings.js';

/**
 * The SDK's BatchSpanProcessor, but a span is encoded the moment it ends. The standard one keeps each ended span, its
 * attributes, times and contexts, until a batch of 512 fills or five seconds pass: at a few thousand deliveries a second
 * those objects outlive the young generation, and the collector promoting them cost ~24 µs a delivery in W4T's drain
 * (bench/README, twenty-second session). Here a span's OTLP bytes join the open batch in end() and the span is garbage
 * at once; an export sends a batch's bytes as they are. Its limits and timing are the standard processor's, read from
 * the same OTEL_BSP_* variables with the same defaults: batches of at most 512 spans, at most 2,048 waiting (later ones
 * are dropped and counted), one export at a time while spans flow (every waiting batch at once on a flush), a batch
 * that does not fill goes after five seconds, and an export is given up after 30 s.
 */

export interface EncodedBatch<T> {
  groups: Array<SpanGroup<T>>;
  count: number;
}

/** What an export is given: the OTLP/HTTP exporter of otel.ts (its transport, retries, headers and timeout). */
export interface BatchExporter<T> {
  export(batch: EncodedBatch<T>, done: (result: ExportResult) => void): void;
  shutdown(): Promise<void>;
}

/** OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT (settings.ts). */
export type SpanBatchLimits = BatchSettings;

export const STANDARD_LIMITS: SpanBatchLimits = { maxBatch: 512, maxQueued: 2048, delayMs: 5000, exportTimeoutMs: 30_000 };

export class EncodingSpanProcessor<T> implements SpanProcessor {
  /** Full batches waiting their turn. */
  private readonly ready: Array<EncodedBatch<T>> = [];
  /** The batch spans are added to. */
  private open: EncodedBatch<T> | null = null;
  /** Spans in `ready` and `open` (not those being exported: as in the SDK's processor, a batch leaves the queue when it goes). */
  private queued = 0;
  private dropped = 0;
  /** Exports under way: one at a time while spans flow, every waiting batch at once on a flush. */
  private readonly exporting = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly encoding: OtlpEncoding<T>,
    private readonly exporter: BatchExporter<T>,
    private readonly limits: SpanBatchLimits = STANDARD_LIMITS,
  ) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queued >= this.limits.maxQueued) {
      this.dropped++;
      return;
    }
    this.reportDropped();
    const batch = (this.open ??= { groups: [], count: 0 });
    const group = groupOf(batch, span.resource, span.instrumentationScope, this.encoding);
    group.spans = this.encoding.append(group.spans, span);
    batch.count++;
    this.queued++;
    if (batch.count >= this.limits.maxBatch) {
      this.ready.push(batch);
      this.open = null;
    }
    this.schedule();
  }

  forceFlush(): Promise<void> {
    return this.flushAll();
  }

  shutdown(): Promise<void> {
    return (this.stopped ??= this.flushAll().then(() => this.exporter.shutdown()));
  }

  private reportDropped(): void {
    if (this.dropped === 0) return;
    diag.warn(`Dropped ${this.dropped} spans: ${this.limits.maxQueued} were waiting for the collector`);
    this.dropped = 0;
  }

  /** A full batch goes at once (after the export under way); a partial one when the delay has passed. */
  private schedule(): void {
    if (this.exporting.size > 0) return;
    const batch = this.ready.shift();
    if (batch !== undefined) {
      this.start(batch);
      return;
    }
    if (this.timer === null && this.open !== null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        if (this.exporting.size > 0 || this.open === null) return;
        const partial = this.open;
        this.open = null;
        this.start(partial);
      }, this.limits.delayMs);
      this.timer.unref();
    }
  }

  private start(batch: EncodedBatch<T>): Promise<void> {
    this.queued -= batch.count;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const run: Promise<void> = this.send(batch)
      .catch((err: unknown) => diag.error('span export failed', err))
      .finally(() => {
        this.exporting.delete(run);
        this.schedule();
      });
    this.exporting.add(run);
    return run;
  }

  /** One batch to the exporter, given up after the export timeout (a resource still reading its attributes included). */
  private send(batch: EncodedBatch<T>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // No timer for no limit (OTEL_BSP_EXPORT_TIMEOUT=0): the exporter's own request timeout still ends the export.
      const timer = Number.isFinite(this.limits.exportTimeoutMs)
        ? setTimeout(() => reject(new Error(`span export took more than ${this.limits.exportTimeoutMs} ms`)), this.limits.exportTimeoutMs)
        : undefined;
      const settle = (err?: unknown) => {
        clearTimeout(timer);
        if (err === undefined) resolve();
        else reject(err instanceof Error ? err : new Error(String(err)));
      };
      const go = () => {
        try {
          this.exporter.export(batch, (result) => settle(result.code === ExportResultCode.SUCCESS ? undefined : (result.error ?? new Error('span export failed'))));
        } catch (err) {
          settle(err);
        }
      };
      // A resource still reading its attributes (an asynchronous detector) is waited for, as the SDK's processor does;
      // otherwise the export starts in this turn.
      const pending = batch.groups.filter((g) => g.resource.asyncAttributesPending).map((g) => g.resource.waitForAsyncAttributes?.());
      if (pending.length === 0) go();
      else Promise.all(pending).then(go, settle);
    });
  }

  /**
   * Every span waiting when it is called, exported: the waiting batches all at once (as the SDK's processor flushes,
   * so a shutdown while the collector is failing takes one export's time, not one per batch), and the exports already
   * under way. Spans that end meanwhile are not waited for.
   */
  private async flushAll(): Promise<void> {
    if (this.open !== null) {
      this.ready.push(this.open);
      this.open = null;
    }
    for (const batch of this.ready.splice(0)) this.start(batch);
    this.reportDropped();
    await Promise.all([...this.exporting]);
  }
}

function groupOf<T>(batch: EncodedBatch<T>, resource: Resource, scope: InstrumentationScope, encoding: OtlpEncoding<T>): SpanGroup<T> {
  // One tracer and one resource in svc: the first group is nearly always the one. By identity, as the SDK's serializer
  // groups (attempt-spans.ts hands over the tracer's own scope object).
  for (const g of batch.groups) if (g.resource === resource && g.scope === scope) return g;
  const group: SpanGroup<T> = { resource, scope, spans: encoding.empty() };
  batch.groups.push(group);
  return group;
}
