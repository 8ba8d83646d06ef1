import type { ApiToken } from '../auth/api-tokens-store.js';
import { iso } from '../lib/clock.js';
import type { Collection } from '../records/collections-store.js';
import type { RecordsTable } from '../db/tables.js';
import type { TargetRow } from '../webhooks/targets-store.js';

/** Internal rows → wire JSON. Times become RFC 3339 UTC strings here and nowhere else. */

export const presentCollection = (c: Collection) => ({
  name: c.name,
  fields: c.fields,
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
});

export const presentToken = (t: ApiToken) => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes,
  collections: t.collections,
  createdAt: iso(t.createdAt),
  lastUsedAt: t.lastUsedAt === null ? null : iso(t.lastUsedAt),
});

export const presentTarget = (t: TargetRow) => ({
  id: t.id,
  name: t.name,
  url: t.url,
  topics: t.topics,
  enabled: t.enabled,
  createdAt: iso(t.createdAt),
  updatedAt: iso(t.updatedAt),
});

/**
 * The record list is the hottest route: its rows' `data` is already JSON text in the database, so the
 * page is assembled as text instead of parsed and serialized again.
 */
export function recordListJson(rows: RecordsTable[], nextCursor: string | null): string {
  const items = rows.map(
    (r) =>
      `{"id":"${r.id}","collection":"${r.collection}","version":${r.version},"createdAt":"${iso(r.created_at)}","updatedAt":"${iso(r.updated_at)}","data":${r.data}}`,
  );
  return `{"items":[${items.join(',')}],"nextCursor":${nextCursor === null ? 'null' : JSON.stringify(nextCursor)}}`;
}
