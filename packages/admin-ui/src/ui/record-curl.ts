/**
 * The public API's record operations for one collection, read from svc's own OpenAPI document
 * (`GET /api/v1/openapi.json`: the schemas that validate the requests), each with a curl command to copy. Nothing
 * here is a list of routes kept by hand: a route the server adds shows up, one it drops goes away.
 */
import type { Field } from '../types.js';
import { exampleFilter } from '../pages/records-browser.js';

interface Parameter {
  name: string;
  in: string;
}
interface Operation {
  operationId?: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: unknown;
  security?: Record<string, string[]>[];
}
export interface OpenApi {
  servers?: { url: string }[];
  paths?: Record<string, Record<string, Operation>>;
}

export interface RecordOperation {
  id: string;
  method: string;
  /** The path with the collection filled in and `{id}` left for the reader. */
  path: string;
  summary: string;
  curl: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * Quoted for a POSIX shell so that nothing inside is expanded (`$`, backquotes, and `!` in an interactive bash):
 * single quotes, or double quotes for text holding a single quote (a filter's 'text') and none of those characters.
 */
function shq(text: string): string {
  if (!text.includes("'")) return `'${text}'`;
  if (!/["$`\\!]/.test(text)) return `"${text}"`;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function example(f: Field): unknown {
  switch (f.type) {
    case 'text': return 'text';
    case 'number': return 1.5;
    case 'integer': return 1;
    case 'boolean': return true;
    case 'datetime': return '2026-01-31T12:00:00Z';
    case 'json': return { key: 'value' };
  }
}

/** Every operation on `/api/v1/collections/{collection}/…` in the document, for `collection`. */
export function recordOperations(doc: OpenApi, collection: string, fields: Field[], origin: string): RecordOperation[] {
  const base = (doc.servers?.[0]?.url ?? origin).replace(/\/+$/, '');
  const out: RecordOperation[] = [];
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    if (!template.includes('{collection}')) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const path = template.replace('{collection}', collection).replace('{id}', '$RECORD_ID');
      out.push({
        id: op.operationId ?? `${method}-${template}`,
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? '',
        curl: curlFor(method, `${base}${path}`, op, fields),
      });
    }
  }
  return out;
}

function curlFor(method: string, url: string, op: Operation, fields: Field[]): string {
  const params = op.parameters ?? [];
  const has = (where: string, name: string) => params.some((p) => p.in === where && p.name.toLowerCase() === name);
  // Double quotes around the URL only: they let $RECORD_ID expand, and a collection name holds no shell character.
  const lines = [method === 'get' ? `curl "${url}"` : `curl -X ${method.toUpperCase()} "${url}"`];
  if ((op.security ?? []).some((s) => 'bearerAuth' in s)) lines.push('-H "Authorization: Bearer $SVC_TOKEN"');
  if (method === 'get' && has('query', 'filter')) {
    lines.push('-G', `--data-urlencode ${shq(`filter=${exampleFilter(fields)}`)}`);
    if (has('query', 'limit')) lines.push('-d limit=20');
  }
  if (has('header', 'if-match')) lines.push(`-H ${shq('If-Match: "1"')}`);
  if (op.requestBody) {
    // A create shows every field; an update sets one (a PATCH sets only the fields it names).
    const shown = method === 'post' ? fields : fields.slice(0, 1);
    const data = Object.fromEntries(shown.map((f) => [f.name, example(f)]));
    lines.push(`-H ${shq('Content-Type: application/json')}`, `-d ${shq(JSON.stringify({ data }))}`);
  }
  return lines.join(' \\\n  ');
}
