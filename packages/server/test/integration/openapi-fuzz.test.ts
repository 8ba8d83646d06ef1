import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type AdminSession, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { FUZZ_SEED, Tally, checkAnswer, headerValue, hugeNumber, nastyJson, nastyText, rawUrlPiece } from '../helpers/fuzz.js';

/**
 * Every operation of both OpenAPI documents, called with malformed paths, parameters, headers and bodies, on
 * every database: no 5xx, every error a problem with its request id, and the process still ready afterwards.
 * Replay a failure with SVC_FUZZ_SEED=<seed> (printed by fast-check); SVC_FUZZ_RUNS sets the runs per operation.
 */
const RUNS = Number(process.env.SVC_FUZZ_RUNS ?? 60);
const FIELDS = ['title', 'n', 'x', 'flag', 'when', 'blob'] as const;

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  admin: boolean;
  params: Array<{ in: string; name: string; schema: Schema }>;
  body: Schema | null;
}

function operations(doc: Schema, admin: boolean): Operation[] {
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(ops)) {
      out.push({ method: method.toUpperCase(), path, admin, params: op.parameters ?? [], body: op.requestBody?.content?.['application/json']?.schema ?? null });
    }
  }
  return out;
}

const recordData = fc.record(
  {
    // Mostly well-formed text of every code point (control characters included), so that it gets stored.
    title: fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) }, { weight: 1, arbitrary: nastyText(200) }, { weight: 1, arbitrary: fc.constant(null) }),
    n: fc.oneof(fc.integer(), fc.constant(null)),
    x: fc.oneof(fc.double(), hugeNumber),
    flag: fc.boolean(),
    when: fc.oneof(
      { weight: 4, arbitrary: fc.date({ min: new Date(0), max: new Date(4_102_444_800_000), noInvalidDate: true }).map((d) => d.toISOString()) },
      { weight: 1, arbitrary: fc.constantFrom('2026-13-01T00:00:00Z', '2026-11-23T25:61:00+14:00', '0000-01-01T00:00:00Z', '2026-11-23T10:00:00.123456789-23:59') },
    ),
    blob: nastyJson(5),
  },
  { requiredKeys: [] },
);

/** Values near the schema (so validation is passed often enough to reach the database) and far from it. */
function fromSchema(schema: Schema, components: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.$ref) return fromSchema(components[String(schema.$ref).split('/').pop()!], components, depth);
  const wrong = nastyJson(2);
  let near: fc.Arbitrary<unknown>;
  if (schema.anyOf) near = fc.oneof(...(schema.anyOf as Schema[]).map((s) => fromSchema(s, components, depth)));
  else if (schema.enum) near = fc.constantFrom(...(schema.enum as unknown[]));
  else if (schema.type === 'object' && schema.properties) {
    const props = Object.fromEntries(Object.entries<Schema>(schema.properties).map(([k, s]) => [k, fromSchema(s, components, depth + 1)]));
    near = fc.record(props, { requiredKeys: schema.required ?? [] });
  } else if (schema.type === 'object') {
    // Record data: values of each field's type most of the time, so that texts of every kind get stored.
    near = fc.oneof(
      { weight: 3, arbitrary: recordData },
      { weight: 1, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS, '__proto__', 'constructor', 'id'), nastyText(8)), nastyJson(3), { maxKeys: 5 }) },
    );
  } else if (schema.type === 'array') near = fc.array(fromSchema(schema.items ?? {}, components, depth + 1), { maxLength: 3 });
  else if (schema.type === 'integer') near = fc.oneof(fc.integer({ min: -10, max: 700_000 }), hugeNumber);
  else if (schema.type === 'boolean') near = fc.boolean();
  else if (schema.type === 'string' && /email|@/.test(String(schema.pattern))) near = fc.constantFrom('a@b.c', 'admin@example.com', '\u0000@x.y');
  else if (schema.type === 'string') near = fc.oneof(fc.constantFrom('issues', 'https://receiver.example/h', 'record.created', 'records:read', 'text'), nastyText());
  else near = wrong;
  return depth > 4 ? near : fc.oneof({ weight: 4, arbitrary: near }, { weight: 1, arbitrary: wrong });
}

type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; bytes: Buffer };

/** Bodies: schema-shaped JSON, raw bytes (invalid UTF-8, encoded surrogates), deep nesting, huge number literals. */
function bodies(schema: Schema | null, components: Schema): fc.Arbitrary<Body> {
  const json = schema ? fromSchema(schema, components) : nastyJson();
  const text = (s: string): Body => ({ kind: 'raw', bytes: Buffer.from(s) });
  return fc.oneof(
    { weight: 6, arbitrary: json.map((value): Body => ({ kind: 'json', value })) },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: 'none' }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b): Body => ({ kind: 'raw', bytes: Buffer.from(b) })) },
    { weight: 1, arbitrary: fc.integer({ min: 20, max: 3000 }).map((d) => text(`{"data":${'['.repeat(d)}${']'.repeat(d)}}`)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        text('{"data":{"n":1e400,"x":-1e400,"title":"\\ud800"}}'),
        text('{"data":{"n":123456789012345678901234567890,"x":1e-400}}'),
        text('{"overlapSeconds":1e400}'),
        text('{"name":"\\u0000","url":"https://x\\u0000.example","topics":["record.created"]}'),
        { kind: 'raw', bytes: Buffer.concat([Buffer.from('{"data":{"title":"'), Buffer.from([0xed, 0xa0, 0x80, 0xff, 0xc0, 0xae]), Buffer.from('"}}')]) },
        text('{"__proto__":{"admin":true},"data":{"constructor":{"prototype":{}}}}'),
      ),
    },
  );
}

describe.each(DIALECTS)('OpenAPI-driven fuzzing (%s)', (dialect) => {
  let t: TestApp;
  let token: string;
  let spare: AdminSession;
  let examples: Record<string, string>;
  let ops: Operation[];
  let components: Schema;
  const tally = new Tally();

  beforeAll(async () => {
    t = await createTestApp(dialect, {}, { resolver: async () => [{ address: '93.184.216.34', family: 4 }] });
    await t.collection('issues', [
      { name: 'title', type: 'text' },
      { name: 'n', type: 'integer' },
      { name: 'x', type: 'number' },
      { name: 'flag', type: 'boolean' },
      { name: 'when', type: 'datetime' },
      { name: 'blob', type: 'json' },
    ]);
    // Sacrificial resources: the operations that delete may find these, never the fuzzer's own token or session.
    await t.collection('spare', [{ name: 'title', type: 'text' }]);
    token = await t.token();
    const victim = (await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: t.admin.headers, payload: { name: 'victim', scopes: ['records:read'], collections: null } })).json();
    const webhook = (await t.app.inject({ method: 'POST', url: '/admin/v1/webhooks', headers: t.admin.headers, payload: { name: 'w', url: 'https://receiver.example/h', topics: ['record.created', 'webhook.test'] } })).json();
    const record = (await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { title: 'seed' } } })).json();
    const delivery = (await t.app.inject({ method: 'POST', url: `/admin/v1/webhooks/${webhook.id}/test`, headers: t.admin.headers })).json();
    examples = { collection: 'issues', name: 'spare', id: '', rec: record.id, tok: victim.id, wh: webhook.id, del: delivery.deliveryId };
    spare = await t.login();
    const pub = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const adm = (await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers: t.admin.headers })).json();
    components = { ...pub.components?.schemas, ...adm.components?.schemas };
    ops = [...operations(pub, false), ...operations(adm, true)];
    expect(ops.length).toBeGreaterThan(25);
  });
  afterAll(async () => {
    console.log(`openapi-fuzz ${dialect}: seed ${FUZZ_SEED}, ${RUNS} runs per operation, ${tally.requests} requests, statuses ${JSON.stringify(tally.statuses)}`);
    await t.close();
  });

  /** The id of the right kind for a path parameter, from the route it is in. */
  const example = (op: Operation, name: string): string => {
    if (name !== 'id') return examples[name]!;
    const kind = /\/records\//.test(op.path) ? 'rec' : /tokens/.test(op.path) ? 'tok' : /webhooks/.test(op.path) ? 'wh' : 'del';
    return examples[kind]!;
  };

  const send = async (options: InjectOptions, what: string) => {
    const res = await t.app.inject(options);
    tally.add(res.statusCode);
    checkAnswer(res, what);
    // A fuzzed logout ends the session it names; keep one to spare for the operations after it.
    if (options.method === 'DELETE' && options.url === '/admin/v1/session' && res.statusCode === 204) spare = await t.login();
    return res;
  };

  const credentials = (op: Operation, mode: string, junk: string): Record<string, string> => {
    if (mode === 'none') return {};
    if (mode === 'junk') return op.admin ? { cookie: `svc_admin=${junk}`, 'x-svc-csrf': junk } : { authorization: junk };
    if (!op.admin) return { authorization: `Bearer ${token}` };
    // Logging out is fuzzed on the spare session, so the fuzzer's own stays valid.
    const session = op.method === 'DELETE' && op.path === '/admin/v1/session' ? spare : t.admin;
    return mode === 'cookie-only' ? { cookie: session.cookie } : { ...session.headers };
  };

  const request = fc.record({
    op: fc.nat(),
    // Mostly the example (so the request reaches the handler), sometimes a malformed piece.
    pathPieces: fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: rawUrlPiece }), { minLength: 3, maxLength: 3 }),
    query: fc.oneof({ weight: 2, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom('limit', 'cursor', 'force', 'webhookId', 'state', 'limit[]'), rawUrlPiece), fc.oneof(rawUrlPiece, fc.constantFrom('1', '500', '0', '-1', '1e3', 'true', 'dead')), { maxKeys: 3 }) }),
    // Mostly valid credentials, so that most requests get past authentication to parsing, validation and storage.
    auth: fc.constantFrom('valid', 'valid', 'valid', 'valid', 'valid', 'valid', 'cookie-only', 'none', 'junk'),
    junk: headerValue,
    contentType: fc.constantFrom('application/json', 'application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'application/merge-patch+json', 'text/plain', 'application/x-www-form-urlencoded', '', 'application/json; charset=latin1'),
    headers: fc.dictionary(fc.constantFrom('if-match', 'if-match', 'idempotency-key', 'idempotency-key', 'x-request-id', 'accept', 'x-forwarded-for', 'origin'), headerValue, { maxKeys: 2 }),
  });

  it('every operation, with everything malformed', { timeout: 120_000 }, async () => {
    for (const op of ops) {
      await fc.assert(
        fc.asyncProperty(request, bodies(op.body, components), async (r, body) => {
          let i = 0;
          const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => r.pathPieces[i++] ?? example(op, name));
          const qs = Object.entries(r.query).map(([k, v]) => `${k}=${v}`).join('&');
          const url = qs ? `${path}?${qs}` : path;
          const headers: Record<string, string> = { ...r.headers, ...credentials(op, r.auth, r.junk) };
          if (r.contentType && body.kind !== 'none') headers['content-type'] = r.contentType;
          const payload = body.kind === 'json' ? JSON.stringify(body.value) : body.kind === 'raw' ? body.bytes : undefined;
          await send({ method: op.method as 'GET', url, headers, payload, remoteAddress: '203.0.113.50' }, `${op.method} ${url}`);
        }),
        { seed: FUZZ_SEED, numRuns: op.method === 'GET' && !op.path.includes('{') ? Math.ceil(RUNS / 3) : RUNS },
      );
    }
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('malformed paths anywhere, with any method', { timeout: 60_000 }, async () => {
    const prefixes = ['/', '/api/v1/', '/api/v1/collections/', '/api/v1/collections/issues/records/', '/admin/v1/', '/admin/v1/webhooks/', '/admin/', '/metrics/'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...prefixes),
        fc.array(rawUrlPiece, { minLength: 1, maxLength: 3 }),
        fc.constantFrom('GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS'),
        fc.boolean(),
        async (prefix, pieces, method, admin) => {
          const url = prefix + pieces.join('/');
          const headers = admin ? t.admin.headers : { authorization: `Bearer ${token}` };
          await send({ method: method as 'GET', url, headers }, `${method} ${url}`);
        },
      ),
      { seed: FUZZ_SEED, numRuns: RUNS * 8 },
    );
    for (const url of ['/api/v1/%ff', '/..%2f..%2fetc%2fpasswd', '/api/v1/collections/../../admin/v1/tokens', '/admin/v1/collections/%00', '/api/v1/collections/%00/records/%00', `/api/v1/collections/issues/records/${'%ff'.repeat(100)}`]) {
      await send({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } }, `GET ${url}`);
    }
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});
