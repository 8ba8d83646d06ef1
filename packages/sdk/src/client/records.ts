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
  /** With `count: true`: how many records match the filter, all pages together. */
  totalCount?: number;
}

/** A record's own members, which filter and sort like fields. */
export type RecordMember = 'id' | 'createdAt' | 'updatedAt' | 'version';
type FieldName<T extends object> = Extract<keyof T, string> | (string extends keyof T ? string : never);
/** A sort key: a field (or member) name, `-` before it for descending. */
export type SortKey<T extends object = RecordData> = FieldName<T> | RecordMember | `-${FieldName<T> | RecordMember}`;

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

/** What a list selects and in which order (docs/queries.md); a cursor belongs to its filter and sort. */
export interface QueryOptions<T extends object = RecordData> {
  /** A filter expression, e.g. `status = 'open' && priority >= 3`; a fault is 400 `invalid_query` with its position. */
  filter?: string;
  /** Up to 3 keys, e.g. `['-priority', 'title']`; ties are broken by id. Default: creation order. */
  sort?: ReadonlyArray<SortKey<T>>;
  /** Only these data fields in each record's `data`. */
  fields?: ReadonlyArray<FieldName<T>>;
}

export interface ListOptions<T extends object = RecordData> extends CallOptions, QueryOptions<T> {
  /** Page size, 1…500; svc's default is 50. */
  limit?: number;
  /** The `nextCursor` of the previous page (of the same filter and sort). */
  cursor?: string;
  /** Adds `totalCount`, the number of records matching the filter. */
  count?: boolean;
}

export interface IterateOptions<T extends object = RecordData> extends CallOptions, QueryOptions<T> {
  /** Records fetched per request, 1…500; default 500 (fewest round trips). */
  pageSize?: number;
}

const joined = (names: ReadonlyArray<string> | undefined): string | undefined => (names === undefined ? undefined : names.join(','));

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

  /** One page, in creation order unless sorted. Pass the answer's `nextCursor` back as `cursor` for the next. */
  async list(options: ListOptions<T> = {}): Promise<RecordPage<T>> {
    const query = {
      limit: options.limit,
      cursor: options.cursor,
      filter: options.filter,
      sort: joined(options.sort),
      fields: joined(options.fields),
      count: options.count,
    };
    const page = await unwrap(
      this.api.GET('/api/v1/collections/{collection}/records', {
        params: { path: { collection: this.collection }, query },
        signal: options.signal,
      }),
    );
    const result: RecordPage<T> = { items: page.items as SvcRecord<T>[], nextCursor: page.nextCursor };
    if (page.totalCount !== undefined) result.totalCount = page.totalCount;
    return result;
  }

  /**
   * Every record (matching `filter`, in `sort` order, else creation order), fetching a page at a time as the loop asks for more. The cursor is the last
   * record seen, so no record comes twice even while others write; records created during the loop may or may not
   * be reached, and one deleted before the loop gets to it is not.
   */
  async *all(options: IterateOptions<T> = {}): AsyncGenerator<SvcRecord<T>, void, undefined> {
    let cursor: string | undefined;
    do {
      const { pageSize, ...rest } = options;
      const page = await this.list({ ...rest, limit: pageSize ?? 500, cursor });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
}
