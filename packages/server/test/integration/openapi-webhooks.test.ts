import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollection, patchCollection } from '../../src/records/collections.js';
import { isOperationalTopic, TOPICS } from '../../src/webhooks/topics.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';
import { openApiDocuments, type OpenApiDoc } from '../helpers/openapi.js';

const publicResolver = async () => [{ address: '93.184.215.14', family: 4 as const }];

/** A validator for one component of `doc`, the way a receiver would use the document. */
function schemaValidator(doc: OpenApiDoc, component: string) {
  const ajv = new Ajv2020.default({ allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const check = ajv.compile({ $ref: `doc#/components/schemas/${component}` });
  return (value: unknown): string[] => (check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
}

const envelopeComponent = (doc: OpenApiDoc, topic: string): string => {
  const body = doc.webhooks![topic]!.post!.requestBody as { content: Record<string, { schema: { $ref: string } }> };
  return body.content['application/json']!.schema.$ref.split('/').at(-1)!;
};

describe.each(DIALECTS)('OpenAPI webhooks section (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, {}, { resolver: publicResolver });
    await t.collection('zebra_tickets', [
      { name: 'stripes', type: 'integer', required: true },
      { name: 'mane', type: 'text' },
      { name: 'seen', type: 'datetime' },
      { name: 'extra', type: 'json' },
    ]);
    await t.collection('okapis', [{ name: 'weight', type: 'number', required: true }, { name: 'wild', type: 'boolean' }]);
  });
  afterAll(async () => t.close());

  it('both documents describe the delivery of every topic: headers, envelope, answers; both stay valid', async () => {
    const docs = await openApiDocuments(t);
    for (const doc of [docs.public, docs.admin]) {
      expect((await validate(structuredClone(doc) as never)).errors ?? []).toEqual([]);
      expect(Object.keys(doc.webhooks ?? {})).toEqual([...TOPICS]);
      for (const topic of TOPICS) {
        const op = doc.webhooks![topic]!.post!;
        // Which set comes depends on the target's signatureScheme (SPEC §13): both documented, neither required.
        const headers = (op.parameters as Array<{ name: string; in: string; required: boolean }>).filter((p) => p.in === 'header').map((p) => p.name);
        expect(headers).toEqual(expect.arrayContaining(['Svc-Delivery', 'Svc-Timestamp', 'Svc-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature']));
        expect(Object.keys(op.responses as object)).toEqual(expect.arrayContaining(['2XX', '401']));
        const envelope = doc.components.schemas![envelopeComponent(doc, topic)]!;
        const branches = (envelope.oneOf as Array<Record<string, unknown>> | undefined) ?? [envelope];
        for (const b of branches) expect(b.required).toEqual(['version', 'id', 'topic', 'collection', 'recordId', 'payload']);
      }
    }
  });

  it('the public document names no collection and no field; the admin one has a record schema per collection', async () => {
    const { public: pub, admin } = await openApiDocuments(t);
    const text = JSON.stringify(pub);
    for (const secret of ['zebra_tickets', 'okapis', 'stripes', 'mane', 'weight']) expect(text).not.toContain(secret);
    expect(pub.components.schemas!.Record).toBeDefined();
    const zebra = admin.components.schemas!.Record_zebra_tickets as { properties: { collection: unknown; data: Record<string, unknown> } };
    expect(zebra.properties.collection).toEqual({ const: 'zebra_tickets' });
    expect(zebra.properties.data).toMatchObject({
      required: ['stripes'],
      additionalProperties: false,
      properties: {
        stripes: { type: 'integer' },
        mane: { type: ['string', 'null'] },
        seen: { type: ['string', 'null'], format: 'date-time' },
        extra: {},
      },
    });
    expect(admin.components.schemas!.Record_okapis).toBeDefined();
  });

  it('the envelopes svc sends validate against both documents, and fail the admin schema when data breaks its collection', async () => {
    const token = await t.token();
    const auth = { authorization: `Bearer ${token}` };
    const target = await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'r', url: 'https://receiver.example/hook', topics: [...TOPICS] } });
    expect(target.statusCode).toBe(201);
    const base = '/api/v1/collections/zebra_tickets/records';
    const created = await t.app.inject({ method: 'POST', url: base, headers: auth, payload: { data: { stripes: 40, mane: null, extra: { any: ['thing'] } } } });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    expect((await t.app.inject({ method: 'PATCH', url: `${base}/${id}`, headers: auth, payload: { data: { seen: '2026-11-23T10:00:00Z', mane: 'short' } } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `${base}/${id}`, headers: auth })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'POST', url: `/admin/v1/webhooks/${target.json().id}/test`, headers: t.admin.headers })).statusCode).toBe(202);
    await t.collection('ephemeral', [{ name: 'x', type: 'text' }]);
    expect((await t.app.inject({ method: 'DELETE', url: '/admin/v1/collections/ephemeral?force=true', headers: t.admin.headers })).statusCode).toBe(204);

    const jobs = (await t.app.inject({ method: 'GET', url: '/admin/v1/deliveries?limit=10', headers: t.admin.headers })).json().items as Array<{ id: string; topic: string }>;
    // Every topic a record write, a test send and a collection's deletion make; the operational ones need a failing
    // target (retention.test, operational-events.test).
    expect(jobs.map((j) => j.topic).sort()).toEqual(TOPICS.filter((topic) => !isOperationalTopic(topic)).sort());
    const docs = await openApiDocuments(t);
    for (const job of jobs) {
      const { envelope } = (await t.app.inject({ method: 'GET', url: `/admin/v1/deliveries/${job.id}`, headers: t.admin.headers })).json();
      for (const doc of [docs.public, docs.admin]) expect(schemaValidator(doc, envelopeComponent(doc, job.topic))(envelope)).toEqual([]);
      if (job.topic === 'record.created') {
        const wrong = structuredClone(envelope);
        wrong.payload.record.data.stripes = 'forty';
        expect(schemaValidator(docs.admin, envelopeComponent(docs.admin, job.topic))(wrong)).not.toEqual([]);
        expect(schemaValidator(docs.public, envelopeComponent(docs.public, job.topic))(wrong)).toEqual([]);
      }
    }
  });

  it('the admin document follows collection changes made by another connection, at the next request', async () => {
    const recordSchemas = async () => Object.keys((await openApiDocuments(t)).admin.components.schemas!).filter((n) => n.startsWith('Record_')).sort();
    expect(await recordSchemas()).toEqual(['Record_okapis', 'Record_zebra_tickets']);
    // A second context on the same database stands for another svc process: nothing in this app is told.
    const other = await createTestContext(dialect, { SVC_SECRET_KEY: t.ctx.config.secretKey! }, { database: t.database });
    try {
      await createCollection(other.ctx, 'giraffes', [{ name: 'neck', type: 'number', required: true }]);
      await patchCollection(other.ctx, 'okapis', [
        { name: 'weight', type: 'number', required: true },
        { name: 'wild', type: 'boolean', required: false },
        { name: 'stripes_on_legs', type: 'boolean', required: false },
      ]);
    } finally {
      await other.ctx.database.close();
    }
    expect(await recordSchemas()).toEqual(['Record_giraffes', 'Record_okapis', 'Record_zebra_tickets']);
    const admin = (await openApiDocuments(t)).admin;
    const okapi = admin.components.schemas!.Record_okapis as { properties: { data: { properties: Record<string, unknown> } } };
    expect(Object.keys(okapi.properties.data.properties)).toEqual(['weight', 'wild', 'stripes_on_legs']);
    const branches = (admin.components.schemas!.RecordCreatedEnvelope!.oneOf as Array<{ properties: { collection: { const: string } } }>).map((b) => b.properties.collection.const);
    expect(branches.sort()).toEqual(['giraffes', 'okapis', 'zebra_tickets']);

    expect((await t.app.inject({ method: 'DELETE', url: '/admin/v1/collections/giraffes', headers: t.admin.headers })).statusCode).toBe(204);
    expect(await recordSchemas()).toEqual(['Record_okapis', 'Record_zebra_tickets']);
    expect(JSON.stringify((await openApiDocuments(t)).public)).not.toContain('giraffes');
  });
});
