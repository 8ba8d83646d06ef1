/** Anything with a case-insensitive `get`, such as the Fetch API's `Headers`. */
export interface HeadersLike {
  get(name: string): string | null;
}

/** A plain header object as Node (`req.headers`), Fastify or Express give it: any letter case. */
export type HeaderRecord = Record<string, string | readonly string[] | undefined>;

export type HeadersInput = HeadersLike | HeaderRecord;

export const DELIVERY_HEADER = 'Svc-Delivery';
export const TIMESTAMP_HEADER = 'Svc-Timestamp';
export const SIGNATURE_HEADER = 'Svc-Signature';

/** Standard Webhooks' headers, sent for a target's `signatureScheme` `standard` or `both`; lowercase as in its spec. */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

function isHeadersLike(headers: HeadersInput): headers is HeadersLike {
  // Duck-typed rather than `instanceof Headers`: runtimes and polyfills each bring their own class.
  return typeof (headers as { get?: unknown }).get === 'function';
}

/** Every non-empty value sent under `name`; empty when the header is absent. */
export function headerValues(headers: HeadersInput, name: string): string[] {
  if (isHeadersLike(headers)) {
    const value = headers.get(name);
    return value ? [value] : [];
  }
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    for (const v of typeof value === 'string' ? [value] : value) {
      if (v !== '') values.push(v);
    }
  }
  return values;
}
