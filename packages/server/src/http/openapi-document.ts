/**
 * The two published documents are cut from the one that @fastify/swagger generates from the route schemas: each
 * keeps its route family, its webhooks section, and only the components it refers to (a public reader has no use
 * for the admin schemas, and unused components are lint warnings).
 */

import { JsonBytes } from '../lib/json-slices.js';

type Json = Record<string, unknown>;
export type SecurityRequirement = Record<string, string[]>;

export interface OpenApiDocument {
  openapi: string;
  info: Json;
  servers?: Json[];
  security?: SecurityRequirement[];
  paths: Record<string, Json>;
  webhooks?: Record<string, Json>;
  components: { securitySchemes?: Record<string, Json>; schemas?: Record<string, Json | JsonBytes> };
  [key: string]: unknown;
}

export interface DocumentPart {
  /** Paths that start with this go in. */
  prefix: string;
  title: string;
  /**
   * The document-wide default; every operation states its own, so this names the schemes the family's
   * operations use (and keeps a scheme the document must list from being an unused component).
   */
  security: SecurityRequirement[];
  webhooks: Record<string, Json>;
  /**
   * Schemas the webhooks section adds (the admin document's per-collection records), all kept: its webhooks refer to
   * each. Those made as JSON ahead (JsonBytes) refer to no schema of the full document.
   */
  schemas: Record<string, Json | JsonBytes>;
}

const SCHEMA_REF = '#/components/schemas/';
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * Every `$ref` to a component schema inside `value`, into `found`. JSON made ahead (JsonBytes) is passed over: it
 * refers to no schema of the full document (DocumentPart.schemas).
 */
function collectRefs(value: unknown, found: Set<string>): void {
  if (value instanceof JsonBytes) return;
  if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string' && v.startsWith(SCHEMA_REF)) found.add(v.slice(SCHEMA_REF.length));
      else collectRefs(v, found);
    }
  }
}

/** The component schemas reachable from `roots`, following references between components. */
function reachableSchemas(roots: unknown[], schemas: Record<string, Json>): Record<string, Json> {
  const names = new Set<string>();
  collectRefs(roots, names);
  const kept: Record<string, Json> = {};
  for (const name of names) {
    const schema = schemas[name];
    // A Set visits what is added while iterating: references between components are followed to the end.
    if (schema && !(name in kept)) {
      kept[name] = schema;
      collectRefs(schema, names);
    }
  }
  return Object.fromEntries(Object.keys(schemas).filter((n) => n in kept).map((n) => [n, kept[n]!]));
}

function usedSchemes(security: SecurityRequirement[], pathItems: Json[]): Set<string> {
  const used = new Set(security.flatMap((r) => Object.keys(r)));
  for (const item of pathItems) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      for (const r of ((op as Json).security ?? []) as SecurityRequirement[]) for (const k of Object.keys(r)) used.add(k);
    }
  }
  return used;
}

export function cutDocument(full: OpenApiDocument, part: DocumentPart): OpenApiDocument {
  const paths = Object.fromEntries(Object.entries(full.paths ?? {}).filter(([p]) => p.startsWith(part.prefix)));
  const fullSchemas = reachableSchemas([paths, part.webhooks, part.schemas], (full.components.schemas ?? {}) as Record<string, Json>);
  const schemes = usedSchemes(part.security, [...Object.values(paths), ...Object.values(part.webhooks)]);
  return {
    openapi: full.openapi,
    info: { ...full.info, title: part.title },
    ...(full.servers ? { servers: full.servers } : {}),
    security: part.security,
    paths,
    webhooks: part.webhooks,
    components: {
      securitySchemes: Object.fromEntries(Object.entries(full.components.securitySchemes ?? {}).filter(([name]) => schemes.has(name))),
      schemas: { ...fullSchemas, ...part.schemas },
    },
  };
}
