import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Tables } from '../db/tables.js';
import { Pace } from '../lib/turns.js';
import { collectionsVersion } from '../records/collections-store.js';

/** An answer as it is kept and sent: its bytes, and their ETag. */
export interface KeptAnswer {
  bytes: Buffer;
  etag: string;
}

/**
 * An answer built from every collection (the admin OpenAPI document, GET /admin/v1/api/schema), kept as its bytes
 * with the collections' version it was built at (migration 023). A request reads the version, one row: while it is
 * the kept one, the kept bytes are sent; else the answer is built again, in slices (Pace), and kept. With 2,000
 * collections of 50 fields (14 MB and 9.5 MB), building them on every request held the event loop 0.55–1.95 s and
 * 0.3–1.1 s.
 *
 * Never stale: the version is read before the collections, and every committed change to a collection moves it (the
 * database's triggers, whichever process made the change). So an answer is built from collections at least as new as
 * the version it is kept under, and a change committed after that read moves the version on: the next request builds
 * again. Requests that find the version being built wait for that one build; one that fails is not kept.
 */
export class CollectionsAnswer {
  #kept: { version: number; answer: Promise<KeptAnswer> } | null = null;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly build: (pace: Pace) => Promise<Buffer>,
  ) {}

  async current(): Promise<KeptAnswer> {
    const version = await collectionsVersion(this.db);
    if (this.#kept?.version !== version) {
      const kept = { version, answer: this.#made() };
      this.#kept = kept;
      kept.answer.catch(() => {
        if (this.#kept === kept) this.#kept = null;
      });
    }
    return this.#kept.answer;
  }

  async #made(): Promise<KeptAnswer> {
    const pace = new Pace();
    const bytes = await this.build(pace);
    // SHA-256 runs at about 1 MB a millisecond: hashed a mebibyte a slice.
    const hash = createHash('sha256');
    for (let at = 0; at < bytes.length; at += HASHED_A_SLICE) {
      hash.update(bytes.subarray(at, at + HASHED_A_SLICE));
      await pace.slice();
    }
    // The bytes' own hash, not the version: processes of other releases or settings (servers' URL) answer otherwise.
    return { bytes, etag: `"${hash.digest('base64url').slice(0, 22)}"` };
  }
}

const HASHED_A_SLICE = 1 << 20;

/** The request header a kept answer's route declares. */
export const IfNoneMatch = Type.Object({ 'if-none-match': Type.Optional(Type.String()) });

/** The route's 304: If-None-Match named the answer's ETag. */
export const notModified = { 304: Type.Null({ description: 'Not Modified: If-None-Match names the ETag of the answer as it is now' }) };

/** Sends a kept answer with its ETag, or 304 with no body when If-None-Match names that ETag (or is `*`). */
export function sendKept(request: FastifyRequest, reply: FastifyReply, answer: KeptAnswer): FastifyReply {
  reply.header('etag', answer.etag);
  const wanted = request.headers['if-none-match'];
  // Compared weakly (RFC 9110 §13.1.2): a W/ prefix names the same answer.
  if (wanted !== undefined && (wanted.trim() === '*' || wanted.split(',').some((tag) => tag.trim().replace(/^W\//, '') === answer.etag))) {
    return reply.code(304).send();
  }
  return reply.type('application/json; charset=utf-8').send(answer.bytes);
}
