/**
 * svc-sdk/admin: the typed client for svc's admin API (`/admin/v1`) with an admin token, for scripts and automation.
 * A separate entry point so that `svc-sdk` (the public client) stays small; the types come from the admin OpenAPI
 * document (src/client/admin-openapi.ts, generated).
 */
export { createAdminClient, type AdminClientOptions, type AdminOpenApiDocument, type SvcAdminClient } from './admin-client.js';
export {
  CollectionsAdmin,
  type Collection,
  type CollectionCreate,
  type CollectionDeleteOptions,
  type Field,
  type FieldInput,
} from './admin-collections.js';
export {
  WebhooksAdmin,
  type RecoverResult,
  type ReplayResult,
  type StatsPageOptions,
  type TimeWindow,
  type Webhook,
  type WebhookCreate,
  type WebhookPatch,
  type WebhookStats,
  type WebhookStatsItem,
  type WebhookWithSecret,
} from './admin-webhooks.js';
export {
  DeliveriesAdmin,
  type DeliveryFilter,
  type DeliveryJob,
  type DeliveryJobDetail,
  type DeliveryListOptions,
  type DeliveryRetryResult,
  type DeliveryState,
  type DeliveryTopic,
} from './admin-deliveries.js';
export type { Instant, IterateOptions, Page, PageOptions } from './admin-pages.js';
export type { AdminApi } from './admin-types.js';
export { SvcApiError, type ErrorCode, type FieldError, type Problem } from './errors.js';
export type { CallOptions } from './records.js';
export type { components, paths } from './admin-openapi.js';
