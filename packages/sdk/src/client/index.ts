/**
 * svc-sdk: the typed client for svc's public API (`/api/v1`). The types come from the OpenAPI document svc
 * publishes (src/client/openapi.ts, generated); the receiver library is the separate entry point `svc-sdk/verify`,
 * and the admin API's client (admin tokens) is `svc-sdk/admin` (src/client/admin.ts), which this file never imports.
 */
export { createClient, type Capabilities, type ClientOptions, type OpenApiDocument, type SvcClient } from './client.js';
export {
  EventFeed,
  EventStream,
  EventsClient,
  type EventFilter,
  type EventListOptions,
  type EventPage,
  type EventPageOptions,
  type EventStreamOptions,
  type EventTopic,
  type FeedEvent,
} from './events.js';
export { type BatchOperation, type BatchResult } from './batch.js';
export { SvcApiError, type ErrorCode, type FieldError, type Problem } from './errors.js';
export {
  RecordsClient,
  type ApiClient,
  type CallOptions,
  type CreateOptions,
  type IterateOptions,
  type ListOptions,
  type QueryOptions,
  type RecordMember,
  type SortKey,
  type RecordData,
  type RecordPage,
  type RecordPatch,
  type SvcRecord,
  type SvcRecord as Record,
  type WriteOptions,
} from './records.js';
export type { components, paths } from './openapi.js';
