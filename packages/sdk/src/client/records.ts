import type { Client } from 'openapi-fetch';
import { errorFromResponse } from './errors.js';
import type { components, paths } from './openapi.js';

/** What a record holds when the caller does not say: any JSON object. */
export type RecordData = { [key: string]: unknown };

/** A stored record: the document's `Record`, with `data` typed as the caller's shape. */
export type SvcRecord<T extends object = RecordData> = Omit<components['schemas']['Record'], 'data'> & { data: T };

/** One page of a list. `nextCursor` is null on the last page. */
export interface RecordPage<T extends object = RecordData> {
  items: SvcRecord<T>[];
  nextCursor: string | null;
}

/** A PATCH body: only the named fields change; `null` clears a field that is not required. */
export type RecordPatch<T extends object> = { [K in keyof T]?: T[K] | null };

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the request; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface CreateOptions extends CallOptions {
  /** Makes a retried create return the first result instead of creating again (kept 24 h, scoped to the token). */
  idempotencyKey?: string;
}

export interface WriteOptions extends CallOptions {
  /** The version you last read: the write fails with 412 `precondition_failed` if the record has changed since. */
  ifMatch?: number;
}

export interface ListOptions extends CallOptions {
  /** Page size, 1…500; svc's default is 50. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

export interface IterateOptions extends CallOptions {
  /** Records fetched per request, 1…500; default 500 (fewest round trips). */
  pageSize?: number;
}

export type ApiClient = Client<paths, 'application/json'>;

type Outcome<D> = { data?: D; error?: unknown; response: Response };

/** Resolves a call's data, or throws the answer as an SvcApiError. */
export async function unwrap<D>(call: Promise<Outcome<D>>): Promise<D> {
  const { data, error, response } = await call;
  if (!response.ok) throw errorFromResponse(response, error);
  return data as D;
}

function ifMatchHeader(version: number | undefined): string | undefined {
  if (version === undefined) return undefined;
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new TypeError(`ifMatch must be a record version (a positive integer), got ${String(version)}`);
  }
  return `"${version}"`;
}

/** The records of one collection. Get one with `client.records<YourShape>('issues')`. */
export class RecordsClient<T extends object = RecordData> {
  constructor(
    private readonly api: ApiClient,
    readonly collection: string,
  ) {}

  /** `POST /api/v1/collections/{c}/records` → the new record (or, for a repeated idempotency key, the first one). */
  async create(data: T, options: CreateOptions = {}): Promise<SvcRecord<T>> {
    const record = await unwrap(
      this.api.POST('/api/v1/collections/{collection}/records', {
        params: { path: { collection: this.collection }, header: { 'idempotency-key': options.idempotencyKey } },
        body: { data: data as RecordData },
        signal: options.signal,
      }),
    );
    return record as SvcRecord<T>;
  }

  /** `GET /api/v1/collections/{c}/records/{id}`; a missing record is 404 `not_found`. */
  async get(id: string, options: CallOptions = {}): Promise<SvcRecord<T>> {
    const record = await unwrap(
      this.api.GET('/api/v1/collections/{collection}/records/{id}', {
        params: { path: { collection: this.collection, id } },
        signal: options.signal,
      }),
    );
    return record as SvcRecord<T>;
  }

  /** `PATCH`: sets the named fields. A patch that changes nothing returns the record as it was, same version. */
  async update(id: string, data: RecordPatch<T>, options: WriteOptions = {}): Promise<SvcRecord<T>> {
    const record = await unwrap(
      this.api.PATCH('/api/v1/collections/{collection}/records/{id}', {
        params: { path: { collection: this.collection, id }, header: { 'if-match': ifMatchHeader(options.ifMatch) } },
        body: { data: data as RecordData },
        signal: options.signal,
      }),
    );
    return record as SvcRecord<T>;
  }

  /** `DELETE`; resolves once svc answered 204. */
  async delete(id: string, options: WriteOptions = {}): Promise<void> {
    await unwrap(
      this.api.DELETE('/api/v1/collections/{collection}/records/{id}', {
        params: { path: { collection: this.collection, id }, header: { 'if-match': ifMatchHeader(options.ifMatch) } },
        signal: options.signal,
      }),
    );
  }

  /** One page, in creation order. Pass the answer's `nextCursor` back as `cursor` for the next. */
  async list(options: ListOptions = {}): Promise<RecordPage<T>> {
    const page = await unwrap(
      this.api.GET('/api/v1/collections/{collection}/records', {
        params: { path: { collection: this.collection }, query: { limit: options.limit, cursor: options.cursor } },
        signal: options.signal,
      }),
    );
    return { items: page.items as SvcRecord<T>[], nextCursor: page.nextCursor };
  }

  /**
   * Every record, in creation order, fetching a page at a time as the loop asks for more. The cursor is the last
   * record seen, so no record comes twice even while others write; records created during the loop may or may not
   * be reached, and one deleted before the loop gets to it is not.
   */
  async *all(options: IterateOptions = {}): AsyncGenerator<SvcRecord<T>, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ limit: options.pageSize ?? 500, cursor, signal: options.signal });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
}
