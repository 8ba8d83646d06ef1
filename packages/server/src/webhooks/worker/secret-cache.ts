import type { SecretBox } from '../../lib/crypto.js';
import type { SigningKeys } from '../signing.js';
import { openStaticHeaders } from '../static-headers.js';
import type { TargetRow } from '../targets-store.js';
import { signingKeys } from '../targets.js';

/** What an attempt of a target needs opened: its signing keys, newest first, and its static headers. */
export interface OpenedTarget {
  signing: SigningKeys;
  headers: Record<string, string>;
}

/**
 * Opened signing material and static headers by target. Opening sealed values per attempt is wasted work, but
 * plaintext must not outlive its use: an entry is replaced when the target's sealed values or its overlap change (a
 * rotated-out secret is gone once its overlap ends), and dropped when the target leaves the worker's view (deleted,
 * disabled).
 */
export class SecretCache {
  private readonly entries = new Map<string, { key: string; opened: OpenedTarget }>();

  constructor(private readonly box: SecretBox) {}

  /** Throws when something cannot be opened (the wrong key). */
  openedFor(target: TargetRow, now: number): OpenedTarget {
    const overlap = target.previousSecretExpiresAt !== null && now < target.previousSecretExpiresAt;
    const key = `${target.signatureAlgorithm}|${target.secretSealed}|${overlap ? target.previousSecretSealed : ''}|${target.headersSealed ?? ''}`;
    const cached = this.entries.get(target.id);
    if (cached?.key === key) return cached.opened;
    const opened = { signing: signingKeys(this.box, target, now), headers: openStaticHeaders(this.box, target.id, target.headersSealed) };
    this.entries.set(target.id, { key, opened });
    return opened;
  }

  /** Forget every target but these. */
  retain(targetIds: Iterable<string>): void {
    const keep = new Set(targetIds);
    for (const id of this.entries.keys()) if (!keep.has(id)) this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }
}
