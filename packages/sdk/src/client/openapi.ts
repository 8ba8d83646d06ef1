/**
 * Generated from svc's own /api/v1/openapi.json by packages/sdk/scripts/generate-types.mjs. Do not edit:
 * run `npm run generate -w packages/sdk`. test/client-drift.test.ts fails when this file and the document differ.
 */

export interface paths {
    "/api/v1/capabilities": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** API version, implemented features, limits in force and event topics */
        get: operations["getCapabilities"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document: OpenAPI 3.1 of the /api/v1 routes */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/collections/{collection}/records": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List records of a collection, in creation order */
        get: operations["listRecords"];
        put?: never;
        /** Create a record (Idempotency-Key makes a repeat return the first result) */
        post: operations["createRecord"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/collections/{collection}/records/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one record; ETag is its version */
        get: operations["getRecord"];
        put?: never;
        post?: never;
        /** Delete a record */
        delete: operations["deleteRecord"];
        options?: never;
        head?: never;
        /** Set the named fields (null clears one); If-Match guards against lost updates */
        patch: operations["updateRecord"];
        trace?: never;
    };
    "/api/v1/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Run record writes in one transaction: all commit, each with its event and jobs, or none does */
        post: operations["runBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The event feed: every committed record change, in one order, from a cursor; long-polls with `wait` */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The event feed as Server-Sent Events, live, resuming from Last-Event-ID */
        get: operations["streamEvents"];
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
        Capabilities: {
            /** @enum {string} */
            apiVersion: "1";
            features: string[];
            limits: {
                [key: string]: number;
            };
            topics: ("record.created" | "record.updated" | "record.deleted" | "webhook.test" | "webhook.disabled" | "delivery.dead" | "collection.deleted")[];
        };
        RecordList: {
            items: components["schemas"]["Record"][];
            nextCursor: string | null;
            totalCount?: number;
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
    getCapabilities: {
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
                    "application/json": components["schemas"]["Capabilities"];
                };
            };
            /** @description The request could not be taken as HTTP: malformed, headers too large, or too slow */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getOpenApiDocument: {
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
                        [key: string]: unknown;
                    };
                };
            };
            /** @description The request could not be taken as HTTP: malformed, headers too large, or too slow */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listRecords: {
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
                collection: string;
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
    createRecord: {
        parameters: {
            query?: never;
            header?: {
                "idempotency-key"?: string;
            };
            path: {
                collection: string;
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
    getRecord: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                collection: string;
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
    deleteRecord: {
        parameters: {
            query?: never;
            header?: {
                "if-match"?: string;
            };
            path: {
                collection: string;
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
    updateRecord: {
        parameters: {
            query?: never;
            header?: {
                "if-match"?: string;
            };
            path: {
                collection: string;
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
    runBatch: {
        parameters: {
            query?: never;
            header?: {
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    operations: {
                        method: "POST" | "PATCH" | "DELETE";
                        collection: string;
                        /** @description PATCH and DELETE: the record. */
                        id?: string;
                        /** @description POST and PATCH: the fields to set. */
                        data?: {
                            [key: string]: unknown;
                        };
                        /** @description PATCH and DELETE: the version the record must be at (as If-Match). */
                        ifMatch?: number;
                    }[];
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
                        results: {
                            status: 201 | 200 | 204;
                            record?: components["schemas"]["RecordWritten"];
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
            409: {
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
    listEvents: {
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
    streamEvents: {
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
