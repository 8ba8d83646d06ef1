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
        get: {
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
            };
        };
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
        get: {
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
            };
        };
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
        get: {
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
        put?: never;
        /** Create a record (Idempotency-Key makes a repeat return the first result) */
        post: {
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
        get: {
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
        put?: never;
        post?: never;
        /** Delete a record */
        delete: {
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
        options?: never;
        head?: never;
        /** Set the named fields (null clears one); If-Match guards against lost updates */
        patch: {
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
        get: {
            parameters: {
                query?: {
                    /** @description A cursor from a previous page, or `now` for the present. Without it: the oldest retained event. */
                    after?: string;
                    limit?: number;
                    /** @description Only these collections (repeatable). */
                    collection?: string[];
                    /** @description Only these topics (repeatable). */
                    topic?: ("record.created" | "record.updated" | "record.deleted" | "webhook.test")[];
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
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description RFC 9457 problem details; branch on `code`. */
        Problem: {
            type: string;
            title: string;
            status: number;
            detail: string;
            /** @enum {unknown} */
            code: "unauthorized" | "forbidden" | "csrf_failed" | "not_found" | "method_not_allowed" | "conflict" | "precondition_failed" | "payload_too_large" | "unsupported_media_type" | "validation_failed" | "invalid_query" | "invalid_json" | "bad_request" | "header_too_large" | "uri_too_long" | "request_timeout" | "destination_refused" | "cursor_expired" | "rate_limited" | "internal" | "unavailable" | "query_timeout";
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
            url: string;
            topics: ("record.created" | "record.updated" | "record.deleted" | "webhook.test")[];
            enabled: boolean;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        WebhookWithSecret: {
            id: string;
            name: string;
            url: string;
            topics: ("record.created" | "record.updated" | "record.deleted" | "webhook.test")[];
            enabled: boolean;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            /** @description The signing secret: shown in this answer only. */
            secret: string;
        };
        Attempt: {
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
        };
        DeliveryJob: {
            id: string;
            webhookId: string;
            /** @enum {unknown} */
            topic: "record.created" | "record.updated" | "record.deleted" | "webhook.test";
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
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DeliveryJobDetail: {
            id: string;
            webhookId: string;
            /** @enum {unknown} */
            topic: "record.created" | "record.updated" | "record.deleted" | "webhook.test";
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
        Capabilities: {
            /** @enum {string} */
            apiVersion: "1";
            features: string[];
            limits: {
                [key: string]: number;
            };
            topics: ("record.created" | "record.updated" | "record.deleted" | "webhook.test")[];
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
            topic: "record.created" | "record.updated" | "record.deleted" | "webhook.test";
            collection: string;
            recordId: string;
            /** Format: date-time */
            occurredAt: string;
            payload: {
                [key: string]: unknown;
            };
        };
        EventList: {
            items: components["schemas"]["Event"][];
            nextCursor: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
