import type { ApiToken } from '../auth/api-tokens-store.js';
import { iso } from '../lib/clock.js';
import type { Collection } from '../records/collections-store.js';
import { targetView } from '../webhooks/views.js';

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

/** The same shape operational events carry (webhooks/views.ts). */
export const presentTarget = targetView;
