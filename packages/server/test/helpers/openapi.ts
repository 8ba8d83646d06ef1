import type { TestApp } from './app.js';

export interface OpenApiOperation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  [key: string]: unknown;
}
export type OpenApiDoc = {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  webhooks?: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas?: Record<string, Record<string, unknown>>; securitySchemes?: Record<string, unknown> };
  [key: string]: unknown;
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Both published documents, as a client gets them. */
export async function openApiDocuments(t: TestApp): Promise<{ public: OpenApiDoc; admin: OpenApiDoc }> {
  const pub = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  const admin = await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers: t.admin.headers });
  if (pub.statusCode !== 200 || admin.statusCode !== 200) throw new Error(`openapi: ${pub.statusCode} ${admin.statusCode}`);
  return { public: pub.json(), admin: admin.json() };
}

/** Every operation of a document's paths (and webhooks), named `METHOD /path` (or `POST webhook record.created`). */
export function operationsOf(doc: OpenApiDoc): Array<{ name: string; operation: OpenApiOperation }> {
  const out: Array<{ name: string; operation: OpenApiOperation }> = [];
  const sections: Array<[string, OpenApiDoc['paths']]> = [['', doc.paths], ['webhook ', doc.webhooks ?? {}]];
  for (const [kind, items] of sections) {
    for (const [path, item] of Object.entries(items)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (operation) out.push({ name: `${method.toUpperCase()} ${kind}${path}`, operation });
      }
    }
  }
  return out;
}
