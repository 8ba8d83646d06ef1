import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';

/**
 * Bodies a route's schema marks `Type.Optional(…)` may be omitted (SPEC §11: `rotate-secret` without a body uses
 * the default overlap). Fastify validates an absent body as null against the schema, and @fastify/swagger marks
 * every body required: both are corrected here.
 */
export const isOptionalBody = (schema: object): boolean => (schema as { '~optional'?: boolean })['~optional'] === true;

export type Validate = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null };

/** Accepts an absent body (null or undefined) and validates anything sent. */
export function allowAbsent(validate: Validate): Validate {
  const wrapped: Validate = (data) => {
    if (data === null || data === undefined) return true;
    const ok = validate(data);
    wrapped.errors = validate.errors;
    return ok;
  };
  return wrapped;
}

type OpenApiPaths = Record<string, Record<string, { requestBody?: { required?: boolean } }>>;

/** Collects the optional-body operations as routes are added; the returned function marks them in a document. */
export function trackOptionalBodies(app: FastifyInstance): (openapi: { paths?: unknown }) => void {
  const operations = new Set<string>();
  app.addHook('onRoute', (route) => {
    const body = route.schema?.body as object | undefined;
    if (!body || !isOptionalBody(body)) return;
    for (const method of [route.method].flat()) operations.add(`${method.toLowerCase()} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
  });
  return (openapi) => {
    const paths = (openapi.paths ?? {}) as OpenApiPaths;
    for (const key of operations) {
      const [method, path] = key.split(' ') as [string, string];
      const body = paths[path]?.[method]?.requestBody;
      if (body) body.required = false;
    }
  };
}
