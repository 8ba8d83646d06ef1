import { diag, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { OtlpEncoding, SpanGroup } from './otlp-encoding.js';

/**
 * The SDK's BatchSpanProcessor, but a span is encoded the moment it ends. The standard one keeps each ended span, its
 * attributes, times and contexts, until a batch of 512 fills or five seconds pass: at a few thousand deliveries a second
 * those objects outlive the young generation, and the collector promoting them cost ~24 µs a delivery in W4T's drain
 * (bench/README, twenty-second session). Here a span's OTLP bytes join the open batch in end() and the span is garbage
 * at once; an export sends a batch's bytes as they are. Its limits and timing are the standard processor's defaults:
 * batches of at most 512 spans, at most 2,048 waiting (later ones are dropped and counted), one export at a time, and
 * a batch that does not fill goes after five seconds.
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

export interface SpanBatchLimits {
  maxBatch: number;
  maxQueued: number;
  delayMs: number;
  exportTimeoutMs: number;
}

export const STANDARD_LIMITS: SpanBatchLimits = { maxBatch: 512, maxQueued: 2048, delayMs: 5000, exportTimeoutMs: 30_000 };

export class EncodingSpanProcessor<T> implements SpanProcessor {
  /** Full batches waiting their turn, then the open one (last). */
  private readonly ready: Array<EncodedBatch<T>> = [];
  private open: EncodedBatch<T> | null = null;
  private queued = 0;
  private dropped = 0;
  private exporting: Promise<void> | null = null;
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
    if (this.dropped > 0) {
      diag.warn(`Dropped ${this.dropped} spans: ${this.limits.maxQueued} were waiting for the collector`);
      this.dropped = 0;
    }
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

  /** A full batch goes at once (after the export under way); a partial one when the delay has passed. */
  private schedule(): void {
    if (this.exporting) return;
    if (this.ready.length > 0) {
      void this.exportNext(false);
      return;
    }
    if (this.timer === null && this.open !== null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.exportNext(true);
      }, this.limits.delayMs);
      this.timer.unref();
    }
  }

  private take(partial: boolean): EncodedBatch<T> | null {
    const batch = this.ready.shift() ?? (partial ? this.open : null);
    if (batch === this.open) this.open = null;
    return batch ?? null;
  }

  private exportNext(partial: boolean): Promise<void> {
    const batch = this.take(partial);
    if (batch === null) return Promise.resolve();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const run = this.send(batch)
      .catch((err: unknown) => diag.error('span export failed', err))
      .finally(() => {
        this.queued -= batch.count;
        this.exporting = null;
        this.schedule();
      });
    this.exporting = run;
    return run;
  }

  private async send(batch: EncodedBatch<T>): Promise<void> {
    // A resource still reading its attributes (an asynchronous detector) is waited for, as the SDK's processor does;
    // otherwise the export starts in this turn.
    const pending = batch.groups.filter((g) => g.resource.asyncAttributesPending).map((g) => g.resource.waitForAsyncAttributes?.());
    if (pending.length > 0) await Promise.all(pending);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('Timeout')), this.limits.exportTimeoutMs);
      this.exporter.export(batch, (result) => {
        clearTimeout(timer);
        if (result.code === ExportResultCode.SUCCESS) resolve();
        else reject(result.error ?? new Error('span export failed'));
      });
    });
  }

  /** Every span waiting now exported, one batch after another (spans that end meanwhile wait for their turn). */
  private async flushAll(): Promise<void> {
    if (this.open !== null) {
      this.ready.push(this.open);
      this.open = null;
    }
    const last = this.ready.at(-1);
    while (this.exporting !== null || (last !== undefined && this.ready.includes(last))) {
      if (this.exporting !== null) await this.exporting;
      else await this.exportNext(false);
    }
  }
}

function groupOf<T>(batch: EncodedBatch<T>, resource: Resource, scope: InstrumentationScope, encoding: OtlpEncoding<T>): SpanGroup<T> {
  // One tracer and one resource in svc: the first group is nearly always the one.
  for (const g of batch.groups) if (g.resource === resource && g.scope === scope) return g;
  const group: SpanGroup<T> = { resource, scope, spans: encoding.empty() };
  batch.groups.push(group);
  return group;
}
