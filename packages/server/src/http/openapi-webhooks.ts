import type { Collection } from '../records/collections-store.js';
import type { FieldType } from '../records/fields.js';
import { OPERATIONAL_COLLECTION, TEST_RECORD_ID } from '../lib/ids.js';
import { JsonBytes } from '../lib/json-slices.js';
import type { Pace } from '../lib/turns.js';
import { TEST_COLLECTION } from '../webhooks/targets.js';
import { TOPICS, type Topic } from '../webhooks/topics.js';

/**
 * The `webhooks` section (OpenAPI 3.1): for every topic, the POST a target receives. The public document describes
 * records generically; the admin document has a record schema per collection, built from its fields — collection
 * names are admin knowledge (the seed keeps schema inspection behind a session).
 */

type Json = Record<string, unknown>;

const DateTime = { type: 'string', format: 'date-time' };
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** What the envelope of one topic carries. `record` is the schema of a record: generic, or one collection's. */
type TopicBody =
  | { kind: 'record'; payload: (record: Json) => Json }
  | { kind: 'fixed'; collection: Json; recordId: Json; payload: Json };

const eventId = { type: 'string', pattern: '^evt_', description: "The event's id in the feed (GET /api/v1/events); absent from deliveries queued before the feed existed." };

const recordPayload = (record: Json, previous: boolean): Json => ({
  type: 'object',
  required: ['record', ...(previous ? ['previous'] : []), 'occurredAt'],
  properties: {
    record,
    ...(previous ? { previous: { ...record, description: 'The record before this change.' } } : {}),
    occurredAt: DateTime,
    eventId,
  },
});

/** An operational event (SPEC §10): collection `_svc`, the all-zero record id, its own payload. */
const operational = (properties: Record<string, Json>): TopicBody => ({
  kind: 'fixed',
  collection: { const: OPERATIONAL_COLLECTION },
  recordId: { const: TEST_RECORD_ID },
  payload: { type: 'object', required: [...Object.keys(properties), 'occurredAt', 'eventId'], properties: { ...properties, occurredAt: DateTime, eventId } },
});

/**
 * One entry per topic; the Record type makes a new topic in TOPICS a compile error until it is described here.
 * A topic not about one record (operational events, a deleted collection) is `fixed`: its collection, record id and
 * payload are its own.
 */
export const TOPIC_BODIES: Record<Topic, { summary: string; body: TopicBody }> = {
  'record.created': { summary: 'A record was created', body: { kind: 'record', payload: (r) => recordPayload(r, false) } },
  'record.updated': { summary: 'A record was changed (`previous` is the record before)', body: { kind: 'record', payload: (r) => recordPayload(r, true) } },
  'record.deleted': { summary: 'A record was deleted (`record` is its last state)', body: { kind: 'record', payload: (r) => recordPayload(r, false) } },
  'webhook.test': {
    summary: 'A test delivery, sent by POST /admin/v1/webhooks/{id}/test',
    body: {
      kind: 'fixed',
      collection: { const: TEST_COLLECTION },
      recordId: { const: TEST_RECORD_ID },
      payload: { type: 'object', required: ['test', 'occurredAt'], properties: { test: { const: true }, occurredAt: DateTime } },
    },
  },
  'webhook.disabled': {
    summary: 'svc disabled a target (after failures, or on a 410 answer); never sent to that target',
    body: operational({
      webhook: { type: 'object', description: 'The target as the admin API shows it (never its secret).' },
      reason: { enum: ['failing', 'gone'] },
    }),
  },
  'delivery.dead': {
    summary: 'A delivery job ended dead; never sent to its own target, never for an operational event',
    body: operational({ delivery: { type: 'object', description: 'The job as the admin API lists it, without envelope or attempts.' } }),
  },
  'collection.deleted': {
    summary: 'A collection was deleted, with its records (no record.deleted is sent for them); narrowed by a target\'s `collections` only',
    body: {
      kind: 'fixed',
      collection: { type: 'string', description: 'The deleted collection.' },
      recordId: { const: TEST_RECORD_ID },
      payload: {
        type: 'object',
        required: ['collection', 'records', 'occurredAt', 'eventId'],
        properties: {
          collection: { type: 'object', required: ['name'], properties: { name: { type: 'string' } }, additionalProperties: false },
          records: { type: 'integer', minimum: 0, description: 'How many records were deleted with it.' },
          occurredAt: DateTime,
          eventId,
        },
      },
    },
  },
};

const pascal = (dotted: string): string => dotted.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
/** Component name of a topic's envelope, e.g. RecordCreatedEnvelope. */
export const envelopeSchemaName = (topic: Topic): string => `${pascal(topic)}Envelope`;
/** Component name of a collection's record in the admin document: the name verbatim, so no two can meet. */
export const collectionRecordSchemaName = (collection: string): string => `Record_${collection}`;

/** The envelope: exactly these six fields (SPEC §5), in the order they are sent. */
const envelope = (topic: Topic, collection: Json, recordId: Json, payload: Json): Json => ({
  type: 'object',
  required: ['version', 'id', 'topic', 'collection', 'recordId', 'payload'],
  properties: { version: { const: '1' }, id: { type: 'string', pattern: '^del_' }, topic: { const: topic }, collection, recordId, payload },
  additionalProperties: false,
});

const RECORD_ID = { type: 'string', pattern: '^rec_' };

const FIELD_SCHEMA: Record<FieldType, Json> = {
  text: { type: 'string' },
  number: { type: 'number' },
  integer: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
  boolean: { type: 'boolean' },
  datetime: { type: 'string', format: 'date-time' },
  json: { description: 'Any JSON value.' },
};

/** A field's value; a field that is not required may hold null (a create may send it so; a PATCH's null removes it). */
function fieldSchema(type: FieldType, required: boolean): Json {
  const schema = FIELD_SCHEMA[type];
  if (required || !('type' in schema)) return schema;
  return { ...schema, type: [schema.type, 'null'] };
}

/** A record of one collection, `data` typed by its fields (fields are never removed, so no other key appears). */
export function collectionRecordSchema(c: Pick<Collection, 'name' | 'fields'>): Json {
  return {
    type: 'object',
    description: `A record of the collection ${c.name}.`,
    required: ['id', 'collection', 'version', 'createdAt', 'updatedAt', 'data'],
    properties: {
      id: RECORD_ID,
      collection: { const: c.name },
      version: { type: 'integer', minimum: 1 },
      createdAt: DateTime,
      updatedAt: DateTime,
      data: {
        type: 'object',
        required: c.fields.filter((f) => f.required).map((f) => f.name),
        properties: Object.fromEntries(c.fields.map((f) => [f.name, fieldSchema(f.type, f.required)])),
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  };
}

/**
 * The signature headers of each scheme (SPEC §5, §13): a target's `signatureScheme` says which set is sent (`both`:
 * both sets), so neither set is required of every delivery. The target's own static headers come too.
 */
const svcScheme = 'Sent when the target\'s `signatureScheme` is `svc` (the default) or `both`.';
const standardScheme = 'Standard Webhooks: sent when the target\'s `signatureScheme` is `standard` or `both`; any Standard Webhooks library verifies it with the secret as shown.';
const headers: Json[] = [
  { name: 'Svc-Delivery', in: 'header', required: false, description: `The delivery's id, the envelope's \`id\`: de-duplicate by it. ${svcScheme}`, schema: { type: 'string', pattern: '^del_' } },
  { name: 'Svc-Timestamp', in: 'header', required: false, description: `Unix seconds when this attempt was signed; refuse one too far from your clock (300 s by default). ${svcScheme}`, schema: { type: 'string', pattern: '^[0-9]+$' } },
  {
    name: 'Svc-Signature',
    in: 'header',
    required: false,
    description: `\`v1=\` and the lowercase hex HMAC-SHA256 of \`<Svc-Timestamp>.<raw body>\`, keyed with the whole \`whsec_…\` secret; during a secret rotation two entries, newest first, separated by a space. ${svcScheme}`,
    schema: { type: 'string', pattern: '^v1=[0-9a-f]{64}( v1=[0-9a-f]{64})*$' },
  },
  { name: 'webhook-id', in: 'header', required: false, description: `The delivery's id (\`del_…\`, the same as \`Svc-Delivery\`): de-duplicate by it. ${standardScheme}`, schema: { type: 'string', pattern: '^del_' } },
  { name: 'webhook-timestamp', in: 'header', required: false, description: `Unix seconds when this attempt was signed. ${standardScheme}`, schema: { type: 'string', pattern: '^[0-9]+$' } },
  {
    name: 'webhook-signature',
    in: 'header',
    required: false,
    description:
      'Space-separated entries, newest first during a rotation: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; ' +
      `or, for an \`ed25519\` target, \`v1a,\` and the base64 ed25519 signature of the same message, verified with the target's \`publicKey\` (\`whpk_…\`). ${standardScheme}`,
    schema: { type: 'string', pattern: '^v1a?,[A-Za-z0-9+/=]+( v1a?,[A-Za-z0-9+/=]+)*$' },
  },
  { name: 'User-Agent', in: 'header', required: true, schema: { const: 'svc-webhooks/1' } },
];

const DESCRIPTION =
  'svc POSTs this to the target URL for every event of a subscribed topic, signed afresh for every attempt; the body bytes ' +
  'never change between attempts. Verify the signature over the raw body before parsing (svc-sdk/verify does this for ' +
  'both schemes), then de-duplicate by the delivery id: delivery is at least once. The target\'s static `headers` (an API ' +
  'key, say) come with every attempt.';

const retryAfter = (what: string): Json => ({
  description: `${what}: a \`Retry-After\` (seconds or an HTTP date, at most one hour) lengthens the wait before the next attempt.`,
  headers: { 'Retry-After': { schema: { type: 'string' } } },
});

const operation = (topic: Topic, schemaName: string): Json => ({
  post: {
    operationId: `receive${pascal(topic)}`,
    summary: TOPIC_BODIES[topic].summary,
    description: DESCRIPTION,
    tags: ['webhook deliveries'],
    // Authenticated by the signature headers above, which no security scheme can express.
    security: [],
    parameters: headers,
    requestBody: { required: true, content: { 'application/json': { schema: ref(schemaName) } } },
    responses: {
      '2XX': { description: 'Delivered: any 2xx status line within the timeout. Up to 1 KiB of the body is kept for diagnostics.' },
      '401': { description: 'The signature did not verify. Like any other non-2xx status, the delivery is retried on schedule and ends dead after the last attempt.' },
      '429': retryAfter('Not now'),
      '503': retryAfter('Unavailable'),
    },
  },
});

export interface WebhooksSection {
  webhooks: Record<string, Json>;
  /** Every one referred to by the webhooks, directly or through another of them. */
  schemas: Record<string, Json | JsonBytes>;
}

/** The topics about one record, each with the payload it carries for a given record schema. */
const RECORD_TOPICS = TOPICS.flatMap((topic) => {
  const { body } = TOPIC_BODIES[topic];
  return body.kind === 'record' ? [{ topic, payload: body.payload }] : [];
});

/**
 * The section with generic records (the public document), or with one record schema per collection (admin). A
 * collection's record schema and its branch of each record topic's envelope are made as JSON at once (JsonBytes), a
 * collection a slice (Pace): as objects, 2,000 collections of 50 fields took 250–600 ms to make and grew the heap
 * 150 MB until the document was written.
 */
export async function webhooksSection(
  collections: 'generic' | { pages: AsyncIterable<ReadonlyArray<Pick<Collection, 'name' | 'fields'>>>; pace: Pace },
): Promise<WebhooksSection> {
  const schemas: Record<string, Json | JsonBytes> = {};
  const webhooks: Record<string, Json> = {};
  // One branch per collection, told apart by `collection`'s constant.
  const branches = new Map<Topic, JsonBytes[]>(RECORD_TOPICS.map(({ topic }) => [topic, []]));
  if (collections !== 'generic') {
    for await (const page of collections.pages) {
      for (const c of page) {
        const record = ref(collectionRecordSchemaName(c.name));
        schemas[collectionRecordSchemaName(c.name)] = JsonBytes.of(collectionRecordSchema(c));
        for (const { topic, payload } of RECORD_TOPICS) branches.get(topic)!.push(JsonBytes.of(envelope(topic, { const: c.name }, RECORD_ID, payload(record))));
        await collections.pace.slice();
      }
    }
  }
  for (const topic of TOPICS) {
    const { body } = TOPIC_BODIES[topic];
    const name = envelopeSchemaName(topic);
    const made = branches.get(topic) ?? [];
    if (body.kind === 'fixed') schemas[name] = envelope(topic, body.collection, body.recordId, body.payload);
    else if (made.length === 0) {
      schemas[name] = envelope(topic, { type: 'string', description: 'The collection of the record.' }, RECORD_ID, body.payload(ref('Record')));
    } else schemas[name] = made.length === 1 ? made[0]! : { oneOf: made };
    webhooks[topic] = operation(topic, name);
  }
  return { webhooks, schemas };
}
