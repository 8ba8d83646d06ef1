import type { AdminApi } from './admin-types.js';
import type { components, paths } from './admin-openapi.js';
import { everyItem, isoTime, type Instant, type IterateOptions, type Page, type PageOptions } from './admin-pages.js';
import { unwrap, type CallOptions } from './records.js';

/** A target as svc lists it (never its secret). */
export type Webhook = components['schemas']['Webhook'];
/** A target with its signing secret: only create, update and rotateSecret answer it. */
export type WebhookWithSecret = components['schemas']['WebhookWithSecret'];
/** `POST /admin/v1/webhooks`'s body: `name` and `topics` required; `filter`, `collections`, … narrow what it gets. */
export type WebhookCreate = paths['/admin/v1/webhooks']['post']['requestBody']['content']['application/json'];
/** `PATCH /admin/v1/webhooks/{id}`'s body: only the members sent change. */
export type WebhookPatch = NonNullable<paths['/admin/v1/webhooks/{id}']['patch']['requestBody']>['content']['application/json'];
/** `GET /admin/v1/webhooks/{id}/stats`: attempts, success rate, latency and hourly buckets of a window. */
export type WebhookStats = paths['/admin/v1/webhooks/{id}/stats']['get']['responses'][200]['content']['application/json'];
/** One item of `GET /admin/v1/webhooks/stats`: a live target's id and its stats (the same as `stats(id)` answers). */
export type WebhookStatsItem = paths['/admin/v1/webhooks/stats']['get']['responses'][200]['content']['application/json']['items'][number];
/** `GET /admin/v1/webhooks/stats`'s options: a page of targets (1…200 a page), and the window's start. */
export interface StatsPageOptions extends PageOptions {
  since?: Instant;
}
/** What `recover` answers: how many jobs it made. */
export type RecoverResult = paths['/admin/v1/webhooks/{id}/recover']['post']['responses'][200]['content']['application/json'];
/** What `replay` answers: how many jobs it made, and the `since` it used. */
export type ReplayResult = paths['/admin/v1/webhooks/{id}/replay']['post']['responses'][200]['content']['application/json'];

/** A window of time: from `since` (required) up to `until` (default: now). */
export interface TimeWindow extends CallOptions {
  since: Instant;
  until?: Instant;
}

/** `admin.webhooks`: the targets. Needs `admin:read` to read and `admin:webhooks` for the rest. */
export class WebhooksAdmin {
  constructor(private readonly api: AdminApi) {}

  /** `GET /admin/v1/webhooks`: one page. */
  list(options: PageOptions = {}): Promise<Page<Webhook>> {
    return unwrap(
      this.api.GET('/admin/v1/webhooks', {
        params: { query: { limit: options.limit, cursor: options.cursor } },
        signal: options.signal,
      }),
    );
  }

  /** Every target, a page at a time. */
  all(options: IterateOptions<PageOptions> = {}): AsyncGenerator<Webhook, void, undefined> {
    return everyItem((o) => this.list(o), options);
  }

  /** `GET /admin/v1/webhooks/{id}`. */
  get(id: string, options: CallOptions = {}): Promise<Webhook> {
    return unwrap(this.api.GET('/admin/v1/webhooks/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  /**
   * `POST /admin/v1/webhooks` → the target with its `secret` (shown here and by rotateSecret only). A URL svc may not
   * call (loopback, private) is 422 `destination_refused`; a bad `filter` is 422 `validation_failed` at `/filter`.
   */
  create(target: WebhookCreate, options: CallOptions = {}): Promise<WebhookWithSecret> {
    return unwrap(this.api.POST('/admin/v1/webhooks', { body: target, signal: options.signal }));
  }

  /** `PATCH /admin/v1/webhooks/{id}`: the members given change; `null` clears one that may be empty. */
  update(id: string, change: WebhookPatch, options: CallOptions = {}): Promise<WebhookWithSecret> {
    return unwrap(
      this.api.PATCH('/admin/v1/webhooks/{id}', { params: { path: { id } }, body: change, signal: options.signal }),
    );
  }

  /** `DELETE /admin/v1/webhooks/{id}`; resolves once svc answered 204. */
  async delete(id: string, options: CallOptions = {}): Promise<void> {
    await unwrap(this.api.DELETE('/admin/v1/webhooks/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  /**
   * `POST /admin/v1/webhooks/{id}/rotate-secret` → the target with its new secret (or ed25519 key pair). The old one
   * keeps signing beside it for `overlapSeconds` (0…604,800; svc's default 86,400), so receivers can switch over.
   */
  rotateSecret(id: string, options: CallOptions & { overlapSeconds?: number } = {}): Promise<WebhookWithSecret> {
    return unwrap(
      this.api.POST('/admin/v1/webhooks/{id}/rotate-secret', {
        params: { path: { id } },
        ...(options.overlapSeconds === undefined ? {} : { body: { overlapSeconds: options.overlapSeconds } }),
        signal: options.signal,
      }),
    );
  }

  /** `POST /admin/v1/webhooks/{id}/test`: queues a `webhook.test` delivery; answers its id (202). */
  async test(id: string, options: CallOptions = {}): Promise<{ deliveryId: string }> {
    return unwrap(this.api.POST('/admin/v1/webhooks/{id}/test', { params: { path: { id } }, signal: options.signal }));
  }

  /** `GET /admin/v1/webhooks/{id}/stats`: the target's health since `since` (default 24 h ago, at most 7 days). */
  stats(id: string, options: CallOptions & { since?: Instant } = {}): Promise<WebhookStats> {
    const since = isoTime(options.since);
    return unwrap(
      this.api.GET('/admin/v1/webhooks/{id}/stats', {
        params: { path: { id }, query: since === undefined ? {} : { since } },
        signal: options.signal,
      }),
    );
  }

  /**
   * `GET /admin/v1/webhooks/stats`: one page of every live target's health since `since` (default 24 h ago, at most
   * 7 days), in the order of `list` (whose cursors it takes); `limit` 1…200 (svc's default 50).
   */
  statsPage(options: StatsPageOptions = {}): Promise<Page<WebhookStatsItem>> {
    const since = isoTime(options.since);
    return unwrap(
      this.api.GET('/admin/v1/webhooks/stats', {
        params: { query: { limit: options.limit, cursor: options.cursor, ...(since === undefined ? {} : { since }) } },
        signal: options.signal,
      }),
    );
  }

  /** Every live target's health, a page at a time (default and most: 200 targets a request). */
  allStats(options: IterateOptions<StatsPageOptions> = {}): AsyncGenerator<WebhookStatsItem, void, undefined> {
    return everyItem((o) => this.statsPage(o), { ...options, pageSize: options.pageSize ?? 200 });
  }

  /** `POST /admin/v1/webhooks/{id}/recover`: every dead job of the target created in the window goes back to pending. */
  recover(id: string, window: TimeWindow): Promise<RecoverResult> {
    return unwrap(
      this.api.POST('/admin/v1/webhooks/{id}/recover', {
        params: { path: { id } },
        body: windowBody(window),
        signal: window.signal,
      }),
    );
  }

  /**
   * `POST /admin/v1/webhooks/{id}/replay`: a job for every retained event of the window that the target's
   * subscription matches and it has no job for. `since` in the answer is the one used (moved forward to retention).
   */
  replay(id: string, window: TimeWindow): Promise<ReplayResult> {
    return unwrap(
      this.api.POST('/admin/v1/webhooks/{id}/replay', {
        params: { path: { id } },
        body: windowBody(window),
        signal: window.signal,
      }),
    );
  }
}

function windowBody(window: TimeWindow): { since: string; until?: string } {
  const until = isoTime(window.until);
  return { since: isoTime(window.since)!, ...(until === undefined ? {} : { until }) };
}
