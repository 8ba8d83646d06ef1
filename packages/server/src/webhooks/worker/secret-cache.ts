import type { SecretBox } from '../../lib/crypto.js';
import type { TargetRow } from '../targets-store.js';
import { signingSecrets } from '../targets.js';

/**
 * Opened signing secrets by target. Opening a sealed secret per attempt is wasted work, but plaintext secrets must
 * not outlive their use: an entry is replaced when the target's sealed secrets or its overlap change (a rotated-out
 * secret is gone once its overlap ends), and dropped when the target leaves the worker's view (deleted, disabled).
 */
export class SecretCache {
  private readonly entries = new Map<string, { key: string; secrets: string[] }>();

  constructor(private readonly box: SecretBox) {}

  /** The secrets that sign now, newest first. Throws when a secret cannot be opened (the wrong key). */
  secretsFor(target: TargetRow, now: number): string[] {
    const overlap = target.previousSecretExpiresAt !== null && now < target.previousSecretExpiresAt;
    const key = `${target.secretSealed}|${overlap ? target.previousSecretSealed : ''}`;
    const cached = this.entries.get(target.id);
    if (cached?.key === key) return cached.secrets;
    const secrets = signingSecrets(this.box, target, now);
    this.entries.set(target.id, { key, secrets });
    return secrets;
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
