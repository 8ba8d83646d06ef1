/**
 * Generated from svc's own /admin/v1/openapi.json by packages/sdk/scripts/generate-types.mjs. Do not edit:
 * run `npm run generate -w packages/sdk`. test/admin-client-drift.test.ts fails when this file and the document differ.
 */

export interface paths {
    "/admin/v1/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The current session and its CSRF token (cookie alone) */
        get: operations["getSession"];
        put?: never;
        /** Log in: sets the svc_admin cookie and returns the CSRF token */
        post: operations["createSession"];
        /** Log out */
        delete: operations["deleteSession"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/session/password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Change this admin's password: a wrong current password counts as a failed login; every other session of this admin ends */
        post: operations["changePassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/setup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create the first admin with the one-time setup token printed at first start */
        post: operations["createFirstAdmin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/admins": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The admins, in creation order (never their passwords) */
        get: operations["listAdmins"];
        put?: never;
        /** Add an admin (a password of at least 12 characters, as at setup) */
        post: operations["createAdmin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/admins/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete an admin and end its sessions; the last admin cannot be deleted */
        delete: operations["deleteAdmin"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/api/schema": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every collection and its fields: no record data, no credentials */
        get: operations["getSchema"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/collections": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List collections */
        get: operations["listCollections"];
        put?: never;
        /** Create a collection with its fields */
        post: operations["createCollection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/collections/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One collection */
        get: operations["getCollection"];
        put?: never;
        post?: never;
        /** Delete a collection (force=true also deletes its records) */
        delete: operations["deleteCollection"];
        options?: never;
        head?: never;
        /** Add fields or change `required` (the list given is the new field list; types never change) */
        patch: operations["updateCollection"];
        trace?: never;
    };
    "/admin/v1/collections/{name}/records": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Browse records (admin UI); same shape as the public list */
        get: operations["listCollectionRecords"];
        put?: never;
        /** Create a record (admin UI); as the public create, without Idempotency-Key */
        post: operations["createCollectionRecord"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/collections/{name}/records/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One record (admin UI); ETag is its version */
        get: operations["getCollectionRecord"];
        put?: never;
        post?: never;
        /** Delete a record (admin UI) */
        delete: operations["deleteCollectionRecord"];
        options?: never;
        head?: never;
        /** Set the named fields of a record (admin UI); If-Match guards against lost updates */
        patch: operations["updateCollectionRecord"];
        trace?: never;
    };
    "/admin/v1/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List API tokens (never the tokens themselves) */
        get: operations["listApiTokens"];
        put?: never;
        /** Create an API token (the token appears in this answer only) */
        post: operations["createApiToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/tokens/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a token; it stops working at once */
        delete: operations["deleteApiToken"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/admin-tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List admin tokens (never the tokens themselves) */
        get: operations["listAdminTokens"];
        put?: never;
        /** Create an admin token for automation on the admin API (the token appears in this answer only) */
        post: operations["createAdminToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/admin-tokens/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an admin token; it stops working at once, in every process */
        delete: operations["deleteAdminToken"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List webhook targets */
        get: operations["listWebhooks"];
        put?: never;
        /** Register a webhook target (HTTPS, or a NATS, RabbitMQ or Redis broker the operator configured); the signing secret appears in this answer only (an ed25519 target: its public key, in every answer) */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One webhook target (never its secret) */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Delete a target; its unfinished jobs end dead (target_deleted) */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /** Change name, the destination (type, url or broker fields), topics, enabled, the subscription or the receiver settings (enabling or a new URL re-checks the destination; a new signatureAlgorithm answers the new secret once) */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/admin/v1/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** New signing secret (or ed25519 key pair); the old one keeps signing beside it for overlapSeconds */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Queue a signed webhook.test delivery to this target */
        post: operations["sendWebhookTest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every live target's health since a time (default 24 h, at most 7 days back), a page of targets at a time
         * @description Items in the order of GET /admin/v1/webhooks (by id; deleted targets absent, disabled ones included), each target's `stats` exactly what GET /admin/v1/webhooks/{id}/stats answers for the same `since`. A cursor of either list is good for the other. A page is bounded (at most 200 targets, 10,000 hourly buckets, 250,000 attempts) and computed in at most 15 statements.
         */
        get: operations["listWebhookStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/{id}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A target's attempts, success rate, latency and hourly buckets since a time (default 24 h, at most 7 days back) */
        get: operations["getWebhookStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/{id}/recover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send every dead job of this target created in the window back to pending for one more round */
        post: operations["recoverWebhookDeliveries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/{id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a job for every retained event in the window that the target's subscription matches and that it has no job for
         * @description `since` in the answer is the one used: moved forward to the delivered-jobs retention horizon if it was earlier.
         */
        post: operations["replayWebhookEvents"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/brokers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The configured message brokers (SVC_BROKERS) a target may deliver into: names and kinds, never URLs */
        get: operations["listBrokers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Delivery jobs, newest first, filtered by target, state, record, event, topic and creation time */
        get: operations["listDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/deliveries/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A job with its envelope and every attempt (oldest first) */
        get: operations["getDelivery"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/deliveries/{id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a dead job through one more full round of the schedule */
        post: operations["retryDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/deliveries/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send every listed dead job through one more full round of the schedule; the others are skipped, each with its reason */
        post: operations["retryDeliveries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The event feed, every collection */
        get: operations["listAdminEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The event feed as Server-Sent Events, every collection */
        get: operations["streamAdminEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One event as the feed shows it, with its delivery jobs (oldest first) */
        get: operations["getAdminEvent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** OpenAPI 3.1 of the /admin/v1 routes */
        get: operations["getAdminOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "record.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A record was created
         * @description svc POSTs this to the target URL for every event of a subscribed topic, signed afresh for every attempt; the body bytes never change between attempts. Verify the signature over the raw body before parsing (svc-sdk/verify does this for both schemes), then de-duplicate by the delivery id: delivery is at least once. The target's static `headers` (an API key, say) come with every attempt.
         */
        post: operations["receiveRecordCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "record.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A record was changed (`previous` is the record before)
         * @description svc POSTs this to the target URL for every event of a subscribed topic, signed afresh for every attempt; the body bytes never change between attempts. Verify the signature over the raw body before parsing (svc-sdk/verify does this for both schemes), then de-duplicate by the delivery id: delivery is at least once. The target's static `headers` (an API key, say) come with every attempt.
         */
        post: operations["receiveRecordUpdated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "record.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A record was deleted (`record` is its last state)
         * @description svc POSTs this to the target URL for every event of a subscribed topic, signed afresh for every attempt; the body bytes never change between attempts. Verify the signature over the raw body before parsing (svc-sdk/verify does this for both schemes), then de-duplicate by the delivery id: delivery is at least once. The target's static `headers` (an API key, say) come with every attempt.
         */
        post: operations["receiveRecordDeleted"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "webhook.test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A test delivery, sent by POST /admin/v1/webhooks/{id}/test
         * @description svc POSTs this to the target URL for every event of a subscribed topic, signed afresh for every attempt; the body bytes never change between attempts. Verify the signature over the raw body before parsing (svc-sdk/verify does this for both schemes), then de-duplicate by the delivery id: delivery is at least once. The target's static `headers` (an API key, say) come with every attempt.
         */
        post: operations["receiveWebhookTest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "webhook.disabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * svc disabled a target (after failures, or on a 410 answer); never sent to that target
         * @description svc POSTs this to the target URL for every event of a subscribed topic, signed afresh for every attempt; the body bytes never change between attempts. Verify the signature over the raw body before parsing (svc-sdk/verify does this for both schemes), then de-duplicate by the delivery id: delivery is at least once. The target's static `headers` (an API key, say) come with every attempt.
         */
        post: operations["receiveWebhookDisabled"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "delivery.dead": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A delivery job ended dead; never sent to its own target, never for an operational event
         * @description svc POSTs this to the target URL for every event of a subscribed topic, signed afresh for every attempt; the body bytes never change between attempts. Verify the signature over the raw body before parsing (svc-sdk/verify does this for both schemes), then de-duplicate by the delivery id: delivery is at least once. The target's static `headers` (an API key, say) come with every attempt.
         */
        post: operations["receiveDeliveryDead"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "collection.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A collection was deleted, with its records (no record.deleted is sent for them); narrowed by a target's `collections` only
         * @description svc POSTs this to the target URL for every event of a subscribed topic, signed afresh for every attempt; the body bytes never change between attempts. Verify the signature over the raw body before parsing (svc-sdk/verify does this for both schemes), then de-duplicate by the delivery id: delivery is at least once. The target's static `headers` (an API key, say) come with every attempt.
         */
        post: operations["receiveCollectionDeleted"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** @description RFC 9457 problem details; branch on `code`. */
        Problem: {
            type: string;
            title: string;
            status: number;
            detail: string;
            /** @enum {unknown} */
            code: "unauthorized" | "forbidden" | "csrf_failed" | "not_found" | "method_not_allowed" | "conflict" | "precondition_failed" | "payload_too_large" | "unsupported_media_type" | "validation_failed" | "invalid_query" | "invalid_json" | "bad_request" | "header_too_large" | "uri_too_long" | "request_timeout" | "destination_refused" | "not_acceptable" | "cursor_expired" | "rate_limited" | "internal" | "unavailable" | "query_timeout" | "storage_full";
            requestId: string;
            errors?: {
                path: string;
                message: string;
                position?: number;
            }[];
        };
        Field: {
            name: string;
            /** @enum {unknown} */
            type: "text" | "number" | "integer" | "boolean" | "datetime" | "json";
            /** @default false */
            required: boolean;
            /**
             * @description svc keeps a database index for filtering and sorting on this field (at most 16 per collection)
             * @default false
             */
            indexed: boolean;
        };
        Collection: {
            name: string;
            fields: {
                name: string;
                /** @enum {unknown} */
                type: "text" | "number" | "integer" | "boolean" | "datetime" | "json";
                /** @default false */
                required: boolean;
                /**
                 * @description svc keeps a database index for filtering and sorting on this field (at most 16 per collection)
                 * @default false
                 */
                indexed: boolean;
            }[];
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        Record: {
            id: string;
            collection: string;
            version: number;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            data: {
                [key: string]: unknown;
            };
        };
        /** @description The record as written; `data` is omitted when the token lacks records:read. */
        RecordWritten: {
            id: string;
            collection: string;
            version: number;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            data?: {
                [key: string]: unknown;
            };
        };
        ApiToken: {
            id: string;
            name: string;
            scopes: ("records:read" | "records:write" | "events:read")[];
            collections: string[] | null;
            /** Format: date-time */
            createdAt: string;
            lastUsedAt: string | null;
        };
        ApiTokenCreated: {
            id: string;
            name: string;
            scopes: ("records:read" | "records:write" | "events:read")[];
            collections: string[] | null;
            /** Format: date-time */
            createdAt: string;
            lastUsedAt: string | null;
            /** @description Shown in this answer only. */
            token: string;
        };
        Webhook: {
            id: string;
            name: string;
            /** @description Where deliveries go: `https` (POST to `url`) or into a broker the operator configured (SVC_BROKERS): NATS JetStream, RabbitMQ or Redis Streams. */
            type: "https" | "nats" | "rabbitmq" | "redis";
            /** @description https: the receiver's URL; null for a broker target. */
            url: string | null;
            /** @description A broker target: the configured broker's name (never its address). */
            broker: string | null;
            /** @description nats: the subject published to; `{collection}` and `{topic}` replaced per event (a topic adds a token per dot). */
            subject: string | null;
            /** @description rabbitmq: the exchange published to (`""`: the default exchange, routing by queue name). */
            exchange: string | null;
            /** @description rabbitmq: the routing key; `{collection}` and `{topic}` replaced per event; null: empty. */
            routingKey: string | null;
            /** @description redis: the stream key XADD appends to; `{collection}` and `{topic}` replaced per event. */
            stream: string | null;
            /** @description redis: the stream is trimmed to about this many entries (`MAXLEN ~`); null: never trimmed. */
            maxLength: number | null;
            topics: ("record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted")[];
            enabled: boolean;
            /** @description Only record events of these collections; null: all. */
            collections: string[] | null;
            /** @description Only record events whose record (or previous state) matches this expression. */
            filter: string | null;
            /** @description record.updated only when one of these fields changed; null: any. */
            changedFields: string[] | null;
            /** @description `record`: one record's deliveries to this target one at a time, oldest version first. */
            ordering: "none" | "record";
            /** @description Which headers sign a delivery: `svc` (Svc-Delivery, Svc-Timestamp, Svc-Signature), `standard` (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) or `both`. */
            signatureScheme: "svc" | "standard" | "both";
            /** @description `ed25519` (with `standard` only): a key pair instead of a secret; `v1a,` signatures verified with `publicKey`. */
            signatureAlgorithm: "hmac-sha256" | "ed25519";
            /** @description An ed25519 target's public key: `whpk_` and the base64 of its 32 bytes. Not secret. */
            publicKey: string | null;
            /** @description Static headers sent with every attempt; values masked: `…` and their last four characters. */
            headers: {
                [key: string]: string;
            } | null;
            rateLimit: {
                /** @description Attempts started per second at most, across every process. */
                perSecond: number;
            } | null;
            /** @description manual: an admin disabled it; failing: svc did, after SVC_WEBHOOK_DISABLE_AFTER without success; gone: svc did, on a 410 answer */
            disabledReason: "manual" | "failing" | "gone" | null;
            disabledAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        WebhookWithSecret: {
            id: string;
            name: string;
            /** @description Where deliveries go: `https` (POST to `url`) or into a broker the operator configured (SVC_BROKERS): NATS JetStream, RabbitMQ or Redis Streams. */
            type: "https" | "nats" | "rabbitmq" | "redis";
            /** @description https: the receiver's URL; null for a broker target. */
            url: string | null;
            /** @description A broker target: the configured broker's name (never its address). */
            broker: string | null;
            /** @description nats: the subject published to; `{collection}` and `{topic}` replaced per event (a topic adds a token per dot). */
            subject: string | null;
            /** @description rabbitmq: the exchange published to (`""`: the default exchange, routing by queue name). */
            exchange: string | null;
            /** @description rabbitmq: the routing key; `{collection}` and `{topic}` replaced per event; null: empty. */
            routingKey: string | null;
            /** @description redis: the stream key XADD appends to; `{collection}` and `{topic}` replaced per event. */
            stream: string | null;
            /** @description redis: the stream is trimmed to about this many entries (`MAXLEN ~`); null: never trimmed. */
            maxLength: number | null;
            topics: ("record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted")[];
            enabled: boolean;
            /** @description Only record events of these collections; null: all. */
            collections: string[] | null;
            /** @description Only record events whose record (or previous state) matches this expression. */
            filter: string | null;
            /** @description record.updated only when one of these fields changed; null: any. */
            changedFields: string[] | null;
            /** @description `record`: one record's deliveries to this target one at a time, oldest version first. */
            ordering: "none" | "record";
            /** @description Which headers sign a delivery: `svc` (Svc-Delivery, Svc-Timestamp, Svc-Signature), `standard` (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) or `both`. */
            signatureScheme: "svc" | "standard" | "both";
            /** @description `ed25519` (with `standard` only): a key pair instead of a secret; `v1a,` signatures verified with `publicKey`. */
            signatureAlgorithm: "hmac-sha256" | "ed25519";
            /** @description An ed25519 target's public key: `whpk_` and the base64 of its 32 bytes. Not secret. */
            publicKey: string | null;
            /** @description Static headers sent with every attempt; values masked: `…` and their last four characters. */
            headers: {
                [key: string]: string;
            } | null;
            rateLimit: {
                /** @description Attempts started per second at most, across every process. */
                perSecond: number;
            } | null;
            /** @description manual: an admin disabled it; failing: svc did, after SVC_WEBHOOK_DISABLE_AFTER without success; gone: svc did, on a 410 answer */
            disabledReason: "manual" | "failing" | "gone" | null;
            disabledAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            /** @description The signing secret (an HMAC target's): shown in this answer only. An ed25519 target has `publicKey` instead. */
            secret?: string;
        };
        DeliveryJob: {
            id: string;
            webhookId: string;
            /** @enum {unknown} */
            topic: "record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted";
            collection: string;
            recordId: string;
            /** @enum {unknown} */
            state: "pending" | "delivering" | "delivered" | "dead";
            attemptCount: number;
            nextAttemptAt: string | null;
            lastError: {
                code: string;
                message: string;
            } | null;
            /** @description `target_disabled`: a pending job of a disabled target, waiting until it is enabled (its nextAttemptAt may be past); else null. */
            heldBy: "target_disabled" | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DeliveryJobDetail: {
            id: string;
            webhookId: string;
            /** @enum {unknown} */
            topic: "record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted";
            collection: string;
            recordId: string;
            /** @enum {unknown} */
            state: "pending" | "delivering" | "delivered" | "dead";
            attemptCount: number;
            nextAttemptAt: string | null;
            lastError: {
                code: string;
                message: string;
            } | null;
            /** @description `target_disabled`: a pending job of a disabled target, waiting until it is enabled (its nextAttemptAt may be past); else null. */
            heldBy: "target_disabled" | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            envelope: {
                [key: string]: unknown;
            };
            attempts: {
                number: number;
                /** Format: date-time */
                startedAt: string;
                durationMs: number;
                statusCode: number | null;
                error: {
                    code: string;
                    message: string;
                } | null;
                responseSnippet: string;
                /** @description The address dialled; null when no connection was made */
                remoteAddress: string | null;
                /** @description Phase durations in ms; null where a phase did not happen (an IP literal has no DNS, a reused connection no connect or TLS) */
                timings: {
                    dnsMs: number | null;
                    connectMs: number | null;
                    tlsMs: number | null;
                    firstByteMs: number | null;
                };
            }[];
        };
        Session: {
            csrfToken: string;
            /** Format: date-time */
            expiresAt: string;
            admin: {
                id: string;
                email: string;
            };
        };
        RecordList: {
            items: components["schemas"]["Record"][];
            nextCursor: string | null;
            totalCount?: number;
        };
        CollectionList: {
            items: components["schemas"]["Collection"][];
            nextCursor: string | null;
        };
        ApiTokenList: {
            items: components["schemas"]["ApiToken"][];
            nextCursor: string | null;
        };
        WebhookList: {
            items: components["schemas"]["Webhook"][];
            nextCursor: string | null;
        };
        DeliveryJobList: {
            items: components["schemas"]["DeliveryJob"][];
            nextCursor: string | null;
        };
        Event: {
            id: string;
            /** @enum {unknown} */
            topic: "record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted";
            collection: string;
            recordId: string;
            /** Format: date-time */
            occurredAt: string;
            payload: {
                [key: string]: unknown;
            };
            /** @description The W3C trace context of the write that made the event, when it was traced (SPEC §15). Absent for untraced writes and for events written before svc 0.2.0. */
            traceparent?: string;
        };
        EventList: {
            items: components["schemas"]["Event"][];
            nextCursor: string;
        };
        EventDetail: {
            id: string;
            /** @enum {unknown} */
            topic: "record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted";
            collection: string;
            recordId: string;
            /** Format: date-time */
            occurredAt: string;
            payload: {
                [key: string]: unknown;
            };
            /** @description The W3C trace context of the write that made the event, when it was traced (SPEC §15). Absent for untraced writes and for events written before svc 0.2.0. */
            traceparent?: string;
            deliveries: components["schemas"]["DeliveryJob"][];
        };
        DeliveryRetryResult: {
            retried: number;
            skipped: {
                id: string;
                /** @description `not_dead`: the job is pending, delivering or delivered; `not_found`: no such job; `target_deleted`: its target was deleted. */
                reason: "not_dead" | "not_found" | "target_deleted";
            }[];
        };
        AdminAccount: {
            id: string;
            email: string;
            /** Format: date-time */
            createdAt: string;
            /** @description The last successful login; null: never logged in. */
            lastLoginAt: string | null;
        };
        AdminAccountList: {
            items: components["schemas"]["AdminAccount"][];
            nextCursor: string | null;
        };
        RecordCreatedEnvelope: {
            /** @constant */
            version: "1";
            id: string;
            /** @constant */
            topic: "record.created";
            /** @description The collection of the record. */
            collection: string;
            recordId: string;
            payload: {
                record: components["schemas"]["Record"];
                /** Format: date-time */
                occurredAt: string;
                /** @description The event's id in the feed (GET /api/v1/events); absent from deliveries queued before the feed existed. */
                eventId?: string;
            };
        };
        RecordUpdatedEnvelope: {
            /** @constant */
            version: "1";
            id: string;
            /** @constant */
            topic: "record.updated";
            /** @description The collection of the record. */
            collection: string;
            recordId: string;
            payload: {
                record: components["schemas"]["Record"];
                /** @description The record before this change. */
                previous: components["schemas"]["Record"];
                /** Format: date-time */
                occurredAt: string;
                /** @description The event's id in the feed (GET /api/v1/events); absent from deliveries queued before the feed existed. */
                eventId?: string;
            };
        };
        RecordDeletedEnvelope: {
            /** @constant */
            version: "1";
            id: string;
            /** @constant */
            topic: "record.deleted";
            /** @description The collection of the record. */
            collection: string;
            recordId: string;
            payload: {
                record: components["schemas"]["Record"];
                /** Format: date-time */
                occurredAt: string;
                /** @description The event's id in the feed (GET /api/v1/events); absent from deliveries queued before the feed existed. */
                eventId?: string;
            };
        };
        WebhookTestEnvelope: {
            /** @constant */
            version: "1";
            id: string;
            /** @constant */
            topic: "webhook.test";
            /** @constant */
            collection: "_test";
            /** @constant */
            recordId: "rec_00000000000000000000000000";
            payload: {
                /** @constant */
                test: true;
                /** Format: date-time */
                occurredAt: string;
            };
        };
        WebhookDisabledEnvelope: {
            /** @constant */
            version: "1";
            id: string;
            /** @constant */
            topic: "webhook.disabled";
            /** @constant */
            collection: "_svc";
            /** @constant */
            recordId: "rec_00000000000000000000000000";
            payload: {
                /** @description The target as the admin API shows it (never its secret). */
                webhook: Record<string, never>;
                /** @enum {unknown} */
                reason: "failing" | "gone";
                /** Format: date-time */
                occurredAt: string;
                /** @description The event's id in the feed (GET /api/v1/events); absent from deliveries queued before the feed existed. */
                eventId: string;
            };
        };
        DeliveryDeadEnvelope: {
            /** @constant */
            version: "1";
            id: string;
            /** @constant */
            topic: "delivery.dead";
            /** @constant */
            collection: "_svc";
            /** @constant */
            recordId: "rec_00000000000000000000000000";
            payload: {
                /** @description The job as the admin API lists it, without envelope or attempts. */
                delivery: Record<string, never>;
                /** Format: date-time */
                occurredAt: string;
                /** @description The event's id in the feed (GET /api/v1/events); absent from deliveries queued before the feed existed. */
                eventId: string;
            };
        };
        CollectionDeletedEnvelope: {
            /** @constant */
            version: "1";
            id: string;
            /** @constant */
            topic: "collection.deleted";
            /** @description The deleted collection. */
            collection: string;
            /** @constant */
            recordId: "rec_00000000000000000000000000";
            payload: {
                collection: {
                    name: string;
                };
                /** @description How many records were deleted with it. */
                records: number;
                /** Format: date-time */
                occurredAt: string;
                /** @description The event's id in the feed (GET /api/v1/events); absent from deliveries queued before the feed existed. */
                eventId: string;
            };
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Session"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Session"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    changePassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    currentPassword: string;
                    /** @description At least 12 characters. */
                    newPassword: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createFirstAdmin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    token: string;
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        admin: {
                            id: string;
                            email: string;
                        };
                    };
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listAdmins: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminAccountList"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createAdmin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminAccount"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteAdmin: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getSchema: {
        parameters: {
            query?: never;
            header?: {
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        collections: components["schemas"]["Collection"][];
                    };
                };
            };
            /** @description Not Modified: If-None-Match names the ETag of the answer as it is now */
            304: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listCollections: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CollectionList"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createCollection: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    fields?: components["schemas"]["Field"][];
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Collection"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getCollection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Collection"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteCollection: {
        parameters: {
            query?: {
                force?: boolean;
            };
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateCollection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    fields: components["schemas"]["Field"][];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Collection"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listCollectionRecords: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
                /** @description A filter expression (docs/queries.md); at most 2048 code points */
                filter?: string;
                /** @description Up to 3 field names, each optionally prefixed by - (descending) */
                sort?: string;
                /** @description Data fields to return, comma-separated */
                fields?: string;
                /** @description Add totalCount, the number of records matching the filter */
                count?: boolean;
            };
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecordList"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createCollectionRecord: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        /** @description The record fields to set. */
        requestBody: {
            content: {
                "application/json": {
                    data: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description The record as written; `data` is omitted when the token lacks records:read. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecordWritten"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getCollectionRecord: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Record"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteCollectionRecord: {
        parameters: {
            query?: never;
            header?: {
                "if-match"?: string;
            };
            path: {
                name: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateCollectionRecord: {
        parameters: {
            query?: never;
            header?: {
                "if-match"?: string;
            };
            path: {
                name: string;
                id: string;
            };
            cookie?: never;
        };
        /** @description The record fields to set. */
        requestBody: {
            content: {
                "application/json": {
                    data: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description The record as written; `data` is omitted when the token lacks records:read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecordWritten"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listApiTokens: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiTokenList"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createApiToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    scopes: ("records:read" | "records:write" | "events:read")[];
                    collections: string[] | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiTokenCreated"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteApiToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listAdminTokens: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            id: string;
                            name: string;
                            scopes: ("admin:read" | "admin:webhooks" | "admin:collections" | "admin:tokens")[];
                            /** Format: date-time */
                            createdAt: string;
                            /** @description Written at most once a minute. */
                            lastUsedAt: string | null;
                            /** @description The id of the admin whose session created the token, or `cli` for `svc admin-token create`. */
                            createdBy: string;
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createAdminToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    scopes: ("admin:read" | "admin:webhooks" | "admin:collections" | "admin:tokens")[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        name: string;
                        scopes: ("admin:read" | "admin:webhooks" | "admin:collections" | "admin:tokens")[];
                        /** Format: date-time */
                        createdAt: string;
                        /** @description Written at most once a minute. */
                        lastUsedAt: string | null;
                        /** @description The id of the admin whose session created the token, or `cli` for `svc admin-token create`. */
                        createdBy: string;
                        /** @description Shown in this answer only; svc keeps its SHA-256. */
                        token: string;
                    };
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteAdminToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    /** @description Where deliveries go: `https` (POST to `url`) or into a broker the operator configured (SVC_BROKERS): NATS JetStream, RabbitMQ or Redis Streams. */
                    type?: "https" | "nats" | "rabbitmq" | "redis";
                    url?: string | null;
                    broker?: string | null;
                    subject?: string | null;
                    exchange?: string | null;
                    routingKey?: string | null;
                    stream?: string | null;
                    maxLength?: number | null;
                    topics: ("record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted")[];
                    enabled?: boolean;
                    collections?: string[] | null;
                    filter?: string | null;
                    changedFields?: string[] | null;
                    ordering?: "none" | "record";
                    /** @description Which headers sign a delivery: `svc` (Svc-Delivery, Svc-Timestamp, Svc-Signature), `standard` (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) or `both`. */
                    signatureScheme?: "svc" | "standard" | "both";
                    /** @description `ed25519` (with `standard` only): a key pair instead of a secret; `v1a,` signatures verified with `publicKey`. */
                    signatureAlgorithm?: "hmac-sha256" | "ed25519";
                    headers?: {
                        [key: string]: string;
                    } | null;
                    rateLimit?: {
                        /** @description Attempts started per second at most, across every process. */
                        perSecond: number;
                    } | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookWithSecret"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description Where deliveries go: `https` (POST to `url`) or into a broker the operator configured (SVC_BROKERS): NATS JetStream, RabbitMQ or Redis Streams. */
                    type?: "https" | "nats" | "rabbitmq" | "redis";
                    url?: string | null;
                    broker?: string | null;
                    subject?: string | null;
                    exchange?: string | null;
                    routingKey?: string | null;
                    stream?: string | null;
                    maxLength?: number | null;
                    topics?: ("record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted")[];
                    enabled?: boolean;
                    collections?: string[] | null;
                    filter?: string | null;
                    changedFields?: string[] | null;
                    ordering?: "none" | "record";
                    /** @description Which headers sign a delivery: `svc` (Svc-Delivery, Svc-Timestamp, Svc-Signature), `standard` (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) or `both`. */
                    signatureScheme?: "svc" | "standard" | "both";
                    /** @description `ed25519` (with `standard` only): a key pair instead of a secret; `v1a,` signatures verified with `publicKey`. */
                    signatureAlgorithm?: "hmac-sha256" | "ed25519";
                    headers?: {
                        [key: string]: string;
                    } | null;
                    rateLimit?: {
                        /** @description Attempts started per second at most, across every process. */
                        perSecond: number;
                    } | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookWithSecret"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    overlapSeconds?: number;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookWithSecret"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    sendWebhookTest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deliveryId: string;
                    };
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listWebhookStats: {
        parameters: {
            query?: {
                since?: string;
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            webhookId: string;
                            stats: {
                                attempts: {
                                    total: number;
                                    succeeded: number;
                                    failed: number;
                                };
                                successRate: number | null;
                                /** @description Nearest-rank percentiles of every attempt duration in the window */
                                latencyMs: {
                                    p50: number | null;
                                    p95: number | null;
                                };
                                lastSuccessAt: string | null;
                                lastFailureAt: string | null;
                                /** @description Hourly, aligned to the hour, oldest first */
                                buckets: {
                                    /** Format: date-time */
                                    start: string;
                                    succeeded: number;
                                    failed: number;
                                }[];
                            };
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getWebhookStats: {
        parameters: {
            query?: {
                since?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        attempts: {
                            total: number;
                            succeeded: number;
                            failed: number;
                        };
                        successRate: number | null;
                        /** @description Nearest-rank percentiles of every attempt duration in the window */
                        latencyMs: {
                            p50: number | null;
                            p95: number | null;
                        };
                        lastSuccessAt: string | null;
                        lastFailureAt: string | null;
                        /** @description Hourly, aligned to the hour, oldest first */
                        buckets: {
                            /** Format: date-time */
                            start: string;
                            succeeded: number;
                            failed: number;
                        }[];
                    };
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    recoverWebhookDeliveries: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: date-time */
                    since: string;
                    /** Format: date-time */
                    until?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobs: number;
                    };
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    replayWebhookEvents: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: date-time */
                    since: string;
                    /** Format: date-time */
                    until?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobs: number;
                        /** Format: date-time */
                        since: string;
                    };
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listBrokers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            name: string;
                            /** @description nats: NATS JetStream; rabbitmq; redis: Redis Streams */
                            kind: "nats" | "rabbitmq" | "redis";
                        }[];
                    };
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listDeliveries: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
                webhookId?: string;
                state?: "pending" | "delivering" | "delivered" | "dead";
                /** @description Only the jobs of this record. */
                recordId?: string;
                /** @description Only the jobs of this event. */
                eventId?: string;
                /** @description Only these topics (repeatable). */
                topic?: ("record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted")[];
                /** @description Only jobs created at or after this time (RFC 3339). */
                since?: string;
                /** @description Only jobs created at or before this time (RFC 3339). A job whose id was made more than a minute after its createdAt (its process's clock stepped back that far) is not found by it. */
                until?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryJobList"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryJobDetail"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    retryDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryJob"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    retryDeliveries: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description 1…100 delivery job ids; a repeated id counts once. */
                    ids: string[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryRetryResult"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listAdminEvents: {
        parameters: {
            query?: {
                /** @description A cursor from a previous page, or `now` for the present. Without it: the oldest retained event. */
                after?: string;
                limit?: number;
                /** @description Only these collections (repeatable). */
                collection?: string[];
                /** @description Only these topics (repeatable). */
                topic?: ("record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted")[];
                /** @description Seconds to wait for a matching event when there is none yet. */
                wait?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventList"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    streamAdminEvents: {
        parameters: {
            query?: {
                /** @description Where to start: a cursor, or `now` (the default). `Last-Event-ID` wins over it. */
                after?: string;
                /** @description Only these collections (repeatable). */
                collection?: string[];
                /** @description Only these topics (repeatable). */
                topic?: ("record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted")[];
            };
            header?: {
                /** @description The id of the last event received: the stream resumes after it. */
                "last-event-id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Server-Sent Events: `retry: 2000`, then per event `id: <cursor>`, `event: <topic>`, `data: <event JSON>`; `: ping` at least every 15 s; an error after the start is `event: error` with a problem in `data`, then the end. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            406: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventDetail"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminOpenApiDocument: {
        parameters: {
            query?: never;
            header?: {
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not Modified: If-None-Match names the ETag of the answer as it is now */
            304: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    receiveRecordCreated: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's id, the envelope's `id`: de-duplicate by it. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Delivery"?: string;
                /** @description Unix seconds when this attempt was signed; refuse one too far from your clock (300 s by default). Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Timestamp"?: string;
                /** @description `v1=` and the lowercase hex HMAC-SHA256 of `<Svc-Timestamp>.<raw body>`, keyed with the whole `whsec_…` secret; during a secret rotation two entries, newest first, separated by a space. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Signature"?: string;
                /** @description The delivery's id (`del_…`, the same as `Svc-Delivery`): de-duplicate by it. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-id"?: string;
                /** @description Unix seconds when this attempt was signed. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-timestamp"?: string;
                /** @description Space-separated entries, newest first during a rotation: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; or, for an `ed25519` target, `v1a,` and the base64 ed25519 signature of the same message, verified with the target's `publicKey` (`whpk_…`). Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-signature"?: string;
                "User-Agent": "svc-webhooks/1";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecordCreatedEnvelope"];
            };
        };
        responses: {
            /** @description The signature did not verify. Like any other non-2xx status, the delivery is retried on schedule and ends dead after the last attempt. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not now: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            429: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unavailable: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            503: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered: any 2xx status line within the timeout. Up to 1 KiB of the body is kept for diagnostics. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveRecordUpdated: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's id, the envelope's `id`: de-duplicate by it. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Delivery"?: string;
                /** @description Unix seconds when this attempt was signed; refuse one too far from your clock (300 s by default). Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Timestamp"?: string;
                /** @description `v1=` and the lowercase hex HMAC-SHA256 of `<Svc-Timestamp>.<raw body>`, keyed with the whole `whsec_…` secret; during a secret rotation two entries, newest first, separated by a space. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Signature"?: string;
                /** @description The delivery's id (`del_…`, the same as `Svc-Delivery`): de-duplicate by it. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-id"?: string;
                /** @description Unix seconds when this attempt was signed. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-timestamp"?: string;
                /** @description Space-separated entries, newest first during a rotation: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; or, for an `ed25519` target, `v1a,` and the base64 ed25519 signature of the same message, verified with the target's `publicKey` (`whpk_…`). Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-signature"?: string;
                "User-Agent": "svc-webhooks/1";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecordUpdatedEnvelope"];
            };
        };
        responses: {
            /** @description The signature did not verify. Like any other non-2xx status, the delivery is retried on schedule and ends dead after the last attempt. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not now: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            429: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unavailable: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            503: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered: any 2xx status line within the timeout. Up to 1 KiB of the body is kept for diagnostics. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveRecordDeleted: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's id, the envelope's `id`: de-duplicate by it. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Delivery"?: string;
                /** @description Unix seconds when this attempt was signed; refuse one too far from your clock (300 s by default). Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Timestamp"?: string;
                /** @description `v1=` and the lowercase hex HMAC-SHA256 of `<Svc-Timestamp>.<raw body>`, keyed with the whole `whsec_…` secret; during a secret rotation two entries, newest first, separated by a space. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Signature"?: string;
                /** @description The delivery's id (`del_…`, the same as `Svc-Delivery`): de-duplicate by it. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-id"?: string;
                /** @description Unix seconds when this attempt was signed. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-timestamp"?: string;
                /** @description Space-separated entries, newest first during a rotation: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; or, for an `ed25519` target, `v1a,` and the base64 ed25519 signature of the same message, verified with the target's `publicKey` (`whpk_…`). Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-signature"?: string;
                "User-Agent": "svc-webhooks/1";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecordDeletedEnvelope"];
            };
        };
        responses: {
            /** @description The signature did not verify. Like any other non-2xx status, the delivery is retried on schedule and ends dead after the last attempt. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not now: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            429: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unavailable: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            503: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered: any 2xx status line within the timeout. Up to 1 KiB of the body is kept for diagnostics. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveWebhookTest: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's id, the envelope's `id`: de-duplicate by it. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Delivery"?: string;
                /** @description Unix seconds when this attempt was signed; refuse one too far from your clock (300 s by default). Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Timestamp"?: string;
                /** @description `v1=` and the lowercase hex HMAC-SHA256 of `<Svc-Timestamp>.<raw body>`, keyed with the whole `whsec_…` secret; during a secret rotation two entries, newest first, separated by a space. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Signature"?: string;
                /** @description The delivery's id (`del_…`, the same as `Svc-Delivery`): de-duplicate by it. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-id"?: string;
                /** @description Unix seconds when this attempt was signed. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-timestamp"?: string;
                /** @description Space-separated entries, newest first during a rotation: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; or, for an `ed25519` target, `v1a,` and the base64 ed25519 signature of the same message, verified with the target's `publicKey` (`whpk_…`). Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-signature"?: string;
                "User-Agent": "svc-webhooks/1";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookTestEnvelope"];
            };
        };
        responses: {
            /** @description The signature did not verify. Like any other non-2xx status, the delivery is retried on schedule and ends dead after the last attempt. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not now: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            429: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unavailable: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            503: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered: any 2xx status line within the timeout. Up to 1 KiB of the body is kept for diagnostics. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveWebhookDisabled: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's id, the envelope's `id`: de-duplicate by it. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Delivery"?: string;
                /** @description Unix seconds when this attempt was signed; refuse one too far from your clock (300 s by default). Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Timestamp"?: string;
                /** @description `v1=` and the lowercase hex HMAC-SHA256 of `<Svc-Timestamp>.<raw body>`, keyed with the whole `whsec_…` secret; during a secret rotation two entries, newest first, separated by a space. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Signature"?: string;
                /** @description The delivery's id (`del_…`, the same as `Svc-Delivery`): de-duplicate by it. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-id"?: string;
                /** @description Unix seconds when this attempt was signed. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-timestamp"?: string;
                /** @description Space-separated entries, newest first during a rotation: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; or, for an `ed25519` target, `v1a,` and the base64 ed25519 signature of the same message, verified with the target's `publicKey` (`whpk_…`). Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-signature"?: string;
                "User-Agent": "svc-webhooks/1";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookDisabledEnvelope"];
            };
        };
        responses: {
            /** @description The signature did not verify. Like any other non-2xx status, the delivery is retried on schedule and ends dead after the last attempt. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not now: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            429: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unavailable: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            503: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered: any 2xx status line within the timeout. Up to 1 KiB of the body is kept for diagnostics. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveDeliveryDead: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's id, the envelope's `id`: de-duplicate by it. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Delivery"?: string;
                /** @description Unix seconds when this attempt was signed; refuse one too far from your clock (300 s by default). Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Timestamp"?: string;
                /** @description `v1=` and the lowercase hex HMAC-SHA256 of `<Svc-Timestamp>.<raw body>`, keyed with the whole `whsec_…` secret; during a secret rotation two entries, newest first, separated by a space. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Signature"?: string;
                /** @description The delivery's id (`del_…`, the same as `Svc-Delivery`): de-duplicate by it. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-id"?: string;
                /** @description Unix seconds when this attempt was signed. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-timestamp"?: string;
                /** @description Space-separated entries, newest first during a rotation: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; or, for an `ed25519` target, `v1a,` and the base64 ed25519 signature of the same message, verified with the target's `publicKey` (`whpk_…`). Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-signature"?: string;
                "User-Agent": "svc-webhooks/1";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeliveryDeadEnvelope"];
            };
        };
        responses: {
            /** @description The signature did not verify. Like any other non-2xx status, the delivery is retried on schedule and ends dead after the last attempt. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not now: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            429: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unavailable: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            503: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered: any 2xx status line within the timeout. Up to 1 KiB of the body is kept for diagnostics. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveCollectionDeleted: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's id, the envelope's `id`: de-duplicate by it. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Delivery"?: string;
                /** @description Unix seconds when this attempt was signed; refuse one too far from your clock (300 s by default). Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Timestamp"?: string;
                /** @description `v1=` and the lowercase hex HMAC-SHA256 of `<Svc-Timestamp>.<raw body>`, keyed with the whole `whsec_…` secret; during a secret rotation two entries, newest first, separated by a space. Sent when the target's `signatureScheme` is `svc` (the default) or `both`. */
                "Svc-Signature"?: string;
                /** @description The delivery's id (`del_…`, the same as `Svc-Delivery`): de-duplicate by it. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-id"?: string;
                /** @description Unix seconds when this attempt was signed. Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-timestamp"?: string;
                /** @description Space-separated entries, newest first during a rotation: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; or, for an `ed25519` target, `v1a,` and the base64 ed25519 signature of the same message, verified with the target's `publicKey` (`whpk_…`). Standard Webhooks: sent when the target's `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown. */
                "webhook-signature"?: string;
                "User-Agent": "svc-webhooks/1";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CollectionDeletedEnvelope"];
            };
        };
        responses: {
            /** @description The signature did not verify. Like any other non-2xx status, the delivery is retried on schedule and ends dead after the last attempt. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not now: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            429: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Unavailable: a `Retry-After` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt. */
            503: {
                headers: {
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered: any 2xx status line within the timeout. Up to 1 KiB of the body is kept for diagnostics. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
