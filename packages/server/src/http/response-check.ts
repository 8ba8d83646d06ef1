import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { Problem, SHARED_SCHEMAS } from './schemas.js';

/**
 * Development and test aid: checks every JSON response against the schema its route documents (the same
 * schema OpenAPI publishes), and records each mismatch, including a status the route does not document.
 * Never enabled in production: it parses every response again.
 */
export function installResponseCheck(app: FastifyInstance, violations: string[]): void {
  const ajv = new Ajv2020.default({ allErrors: true, strict: false });
  addFormats.default(ajv);
  for (const s of SHARED_SCHEMAS) ajv.addSchema(s);
  const compiled = new WeakMap<object, ReturnType<typeof ajv.compile>>();
  const validatorFor = (schema: object) => {
    let v = compiled.get(schema);
    if (!v) {
      v = ajv.compile(schema);
      compiled.set(schema, v);
    }
    return v;
  };

  app.addHook('onSend', async (request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '');
    // A page answered as bytes (the event feed) is checked like text.
    const text = Buffer.isBuffer(payload) ? payload.toString('utf8') : payload;
    if (!type.includes('json') || typeof text !== 'string' || text === '') return payload;
    const status = reply.statusCode;
    const responses = (request.routeOptions.schema?.response ?? null) as Record<string, object> | null;
    const where = `${request.method} ${request.routeOptions.url ?? request.url} → ${status}`;
    let schema: object | undefined;
    if (responses) {
      schema = responses[String(status)] ?? responses[`${String(status)[0]}xx`];
      // Errors raised before routing or by the framework (413, 415, 400) are problem documents too.
      if (!schema && type.includes('problem+json') && status !== 500) schema = Problem;
      if (!schema) {
        violations.push(`${where}: status not documented`);
        return payload;
      }
    } else if (type.includes('problem+json')) schema = Problem;
    else return payload;
    const validate = validatorFor(schema);
    if (!validate(JSON.parse(text))) violations.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    return payload;
  });
}
