import type { AdminApi } from './admin-types.js';
import type { components, paths } from './admin-openapi.js';
import { everyItem, type IterateOptions, type Page, type PageOptions } from './admin-pages.js';
import { unwrap, type CallOptions } from './records.js';

/** A collection and its fields, as `GET /admin/v1/collections/{name}` answers. */
export type Collection = components['schemas']['Collection'];
/** A field as svc stores it; `required` and `indexed` are always present in answers. */
export type Field = components['schemas']['Field'];
/** A field as you send it: `required` and `indexed` default to false. */
export type FieldInput = Omit<Field, 'required' | 'indexed'> & Partial<Pick<Field, 'required' | 'indexed'>>;

type CreateBody = paths['/admin/v1/collections']['post']['requestBody']['content']['application/json'];

export interface CollectionCreate extends Omit<CreateBody, 'fields'> {
  fields?: FieldInput[];
}

export interface CollectionDeleteOptions extends CallOptions {
  /** Delete a collection that still holds records (they go with it, in one `collection.deleted` event). */
  force?: boolean;
}

/** `admin.collections`: needs `admin:read` to read and `admin:collections` to write. */
export class CollectionsAdmin {
  constructor(private readonly api: AdminApi) {}

  /** `GET /admin/v1/collections`: one page. */
  list(options: PageOptions = {}): Promise<Page<Collection>> {
    return unwrap(
      this.api.GET('/admin/v1/collections', {
        params: { query: { limit: options.limit, cursor: options.cursor } },
        signal: options.signal,
      }),
    );
  }

  /** Every collection, a page at a time. */
  all(options: IterateOptions<PageOptions> = {}): AsyncGenerator<Collection, void, undefined> {
    return everyItem((o) => this.list(o), options);
  }

  /** `GET /admin/v1/collections/{name}`; a missing one is 404 `not_found`. */
  get(name: string, options: CallOptions = {}): Promise<Collection> {
    return unwrap(this.api.GET('/admin/v1/collections/{name}', { params: { path: { name } }, signal: options.signal }));
  }

  /** `POST /admin/v1/collections`; a name in use is 409 `conflict`. */
  create(collection: CollectionCreate, options: CallOptions = {}): Promise<Collection> {
    return unwrap(
      this.api.POST('/admin/v1/collections', { body: collection as CreateBody, signal: options.signal }),
    );
  }

  /**
   * `PATCH /admin/v1/collections/{name}`: `fields` is the whole new list. Existing fields stay (removing one, or
   * changing its type, is 422 `validation_failed`); making one required while records lack it is 409 `conflict`.
   */
  update(name: string, change: { fields: FieldInput[] }, options: CallOptions = {}): Promise<Collection> {
    return unwrap(
      this.api.PATCH('/admin/v1/collections/{name}', {
        params: { path: { name } },
        body: change as { fields: Field[] },
        signal: options.signal,
      }),
    );
  }

  /** `DELETE /admin/v1/collections/{name}`; without `force`, one that holds records is 409 `conflict`. */
  async delete(name: string, options: CollectionDeleteOptions = {}): Promise<void> {
    await unwrap(
      this.api.DELETE('/admin/v1/collections/{name}', {
        params: { path: { name }, query: options.force === undefined ? {} : { force: options.force } },
        signal: options.signal,
      }),
    );
  }
}
