import type { AdminApi } from './admin-types.js';
import type { components, operations } from './admin-openapi.js';
import { everyItem, isoTime, type Instant, type IterateOptions, type Page, type PageOptions } from './admin-pages.js';
import { unwrap, type CallOptions } from './records.js';

/** A delivery job (one event for one target) as svc lists it. */
export type DeliveryJob = components['schemas']['DeliveryJob'];
/** A job with its attempts, as `GET /admin/v1/deliveries/{id}` answers. */
export type DeliveryJobDetail = components['schemas']['DeliveryJobDetail'];
/** What a bulk retry answers: how many were retried, and each id skipped with its reason. */
export type DeliveryRetryResult = components['schemas']['DeliveryRetryResult'];

type ListQuery = NonNullable<operations['listDeliveries']['parameters']['query']>;
export type DeliveryState = NonNullable<ListQuery['state']>;
export type DeliveryTopic = NonNullable<ListQuery['topic']>[number];

/** Which jobs `list` and `all` return; every filter is applied by svc, all of them together. */
export interface DeliveryFilter {
  webhookId?: string;
  state?: DeliveryState;
  recordId?: string;
  eventId?: string;
  /** Jobs of any of these topics. */
  topics?: readonly DeliveryTopic[];
  /** Jobs created at or after this time. */
  since?: Instant;
  /** Jobs created at or before this time. */
  until?: Instant;
}

export interface DeliveryListOptions extends PageOptions, DeliveryFilter {}

/** `admin.deliveries`: needs `admin:read` to read and `admin:webhooks` to retry. */
export class DeliveriesAdmin {
  constructor(private readonly api: AdminApi) {}

  /** `GET /admin/v1/deliveries`: one page of the jobs matching the filter; a bad filter is 400 `invalid_query`. */
  list(options: DeliveryListOptions = {}): Promise<Page<DeliveryJob>> {
    const query: ListQuery = {
      limit: options.limit,
      cursor: options.cursor,
      webhookId: options.webhookId,
      state: options.state,
      recordId: options.recordId,
      eventId: options.eventId,
      topic: options.topics === undefined ? undefined : [...options.topics],
      since: isoTime(options.since),
      until: isoTime(options.until),
    };
    return unwrap(this.api.GET('/admin/v1/deliveries', { params: { query }, signal: options.signal }));
  }

  /** Every job matching the filter, a page at a time. */
  all(options: IterateOptions<DeliveryListOptions> = {}): AsyncGenerator<DeliveryJob, void, undefined> {
    return everyItem((o) => this.list(o), options);
  }

  /** `GET /admin/v1/deliveries/{id}`: the job and its attempts. */
  get(id: string, options: CallOptions = {}): Promise<DeliveryJobDetail> {
    return unwrap(this.api.GET('/admin/v1/deliveries/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  /** `POST /admin/v1/deliveries/{id}/retry`: a dead job goes through the schedule once more; another is 409 `conflict`. */
  retry(id: string, options: CallOptions = {}): Promise<DeliveryJob> {
    return unwrap(
      this.api.POST('/admin/v1/deliveries/{id}/retry', { params: { path: { id } }, signal: options.signal }),
    );
  }

  /**
   * `POST /admin/v1/deliveries/retry`: up to 100 ids at once. Jobs that are not dead, unknown or of a deleted target
   * are skipped (each listed with its reason), not failed.
   */
  retryMany(ids: readonly string[], options: CallOptions = {}): Promise<DeliveryRetryResult> {
    return unwrap(this.api.POST('/admin/v1/deliveries/retry', { body: { ids: [...ids] }, signal: options.signal }));
  }
}
