/**
 * What `claim` found:
 * - `claimed`: this run holds the id now and must finish with `complete` or `release`;
 * - `in_progress`: another run holds it and its in-progress time has not passed (answer 409: svc retries later);
 * - `done`: a run completed it within the done TTL (answer 2xx: it was processed).
 */
export type ClaimOutcome = 'claimed' | 'in_progress' | 'done';

/**
 * Remembers which deliveries were processed, so a redelivery (svc delivers at least once) is not applied twice, and
 * none is lost: an id counts as done only once its handler succeeded.
 *
 * Every run brings a random `token`; the store keeps the holder's token with an in-progress claim, so a run whose
 * claim expired and was taken over cannot complete or release the newer run's claim. Every method must be atomic.
 *
 *     absent ──claim──▶ in_progress ──complete──▶ done ──(done TTL passes)──▶ absent
 *                           │  ▲
 *        release or the     │  └── claim (its in-progress TTL passed: a crashed or hung run)
 *        in-progress TTL ───┘
 *        passes: absent
 */
export interface DedupeStore {
  /**
   * Takes the id for this run when it is absent, or when the earlier claim or done mark expired; otherwise says
   * which state it is in. Of any number of concurrent callers with the same id, exactly one gets `claimed`.
   */
  claim(id: string, token: string, inProgressTtlSeconds: number): Promise<ClaimOutcome>;
  /**
   * Marks the id done for `doneTtlSeconds`, unless another run holds a live claim on it or it is done already.
   * True when this call marked it. Its own expired claim still counts as its own: the handler did succeed.
   */
  complete(id: string, token: string, doneTtlSeconds: number): Promise<boolean>;
  /** Forgets this run's in-progress claim, so a retry can run at once; true when there was one to forget. */
  release(id: string, token: string): Promise<boolean>;
}
