import { expect } from 'vitest';
import type { StreamTiming } from '../../src/events/stream-fanout.js';
import { createTestApp, type TestApp } from './app.js';
import type { Dialect } from './db.js';

/** A test app for the feed and its streams: listening on loopback, with collections and a token that writes. */
export interface FeedApp {
  t: TestApp;
  /** Where it listens: `http://127.0.0.1:<port>`. */
  base: string;
  /** Headers of a token with records:read and records:write. */
  writer: Record<string, string>;
  /** Creates a record (201 expected) and returns its id. */
  create(collection: string, data: Record<string, unknown>): Promise<string>;
  /** Sets fields of a record (200 expected). */
  update(collection: string, id: string, data: Record<string, unknown>): Promise<void>;
}

/** Each collection gets one text field per name in `fields` (default `title`). */
export async function startFeedApp(
  dialect: Dialect,
  opts: { env?: Record<string, string>; collections: string[]; fields?: string[]; streamTiming?: StreamTiming },
): Promise<FeedApp> {
  const t = await createTestApp(dialect, opts.env ?? {}, { streamTiming: opts.streamTiming });
  for (const name of opts.collections) await t.collection(name, (opts.fields ?? ['title']).map((field) => ({ name: field, type: 'text' })));
  const writer = { authorization: `Bearer ${await t.token(['records:read', 'records:write'])}` };
  const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    t,
    base,
    writer,
    async create(collection, data) {
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/collections/${collection}/records`, headers: writer, payload: { data } });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
      return res.json().id;
    },
    async update(collection, id, data) {
      const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/collections/${collection}/records/${id}`, headers: writer, payload: { data } });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    },
  };
}
