/**
 * The scopes a token may be given, read from svc itself: the admin OpenAPI document's schema of
 * `POST /admin/v1/tokens` (API tokens) or `POST /admin/v1/admin-tokens` (admin tokens), the very schema that validates
 * the form's request. A list copied into the UI drifted once (it could not grant `events:read`); this one is whatever
 * the server accepts.
 */
import { api } from './api.js';

export type TokenPath = '/admin/v1/tokens' | '/admin/v1/admin-tokens';

type Schema = { $ref?: string; enum?: unknown[]; const?: unknown; anyOf?: Schema[]; oneOf?: Schema[]; items?: Schema; properties?: Record<string, Schema> };
type Document = {
  paths?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: Schema }> } } }>;
  components?: { schemas?: Record<string, Schema> };
};

/** `#/components/schemas/Name` → that schema; anything else as it is. */
function resolve(doc: Document, schema: Schema | undefined): Schema | undefined {
  const ref = schema?.$ref;
  if (!ref) return schema;
  const name = ref.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : null;
  return name === null ? undefined : resolve(doc, doc.components?.schemas?.[name]);
}

/** Every string a schema admits by enumeration: `enum`, `const`, and the alternatives of `anyOf` / `oneOf`, in order. */
function literals(doc: Document, schema: Schema | undefined): string[] {
  const s = resolve(doc, schema);
  if (!s) return [];
  const own = [...(s.enum ?? []), ...(s.const === undefined ? [] : [s.const])].filter((v): v is string => typeof v === 'string');
  const alternatives = [...(s.anyOf ?? []), ...(s.oneOf ?? [])].flatMap((alt) => literals(doc, alt));
  return [...new Set([...own, ...alternatives])];
}

/** The scopes of a token-creation request in an admin OpenAPI document; an error when it names none. */
export function scopesFromDocument(doc: unknown, path: TokenPath = '/admin/v1/tokens'): string[] {
  const d = (doc ?? {}) as Document;
  const body = resolve(d, d.paths?.[path]?.post?.requestBody?.content?.['application/json']?.schema);
  const scopes = literals(d, resolve(d, body?.properties?.scopes)?.items);
  if (scopes.length === 0) throw new Error('The admin API document names no token scopes.');
  return scopes;
}

let document: Promise<unknown> | null = null;

/**
 * The document is read once per page load (scopes change only with an upgrade of svc, which reloads the UI); a
 * failure is tried again next time.
 */
export function tokenScopes(path: TokenPath = '/admin/v1/tokens'): Promise<string[]> {
  document ??= api.get<unknown>('/openapi.json').catch((err: unknown) => {
    document = null;
    throw err;
  });
  return document.then((doc) => scopesFromDocument(doc, path));
}
