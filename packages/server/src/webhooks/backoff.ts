/**
 * The wait before the next attempt, or null when the round is over (the job goes dead).
 * Pure: the schedule, the attempt number within the round and the randomness are passed in.
 *
 * `attemptInRound` is 1 after the round's first attempt failed, so the next wait is schedule[1].
 */
export const RETRY_AFTER_CAP_SECONDS = 3600;

export function nextAttemptDelay(
  schedule: readonly number[],
  attemptInRound: number,
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number | null {
  if (attemptInRound >= schedule.length) return null;
  const base = schedule[attemptInRound]!;
  // ±10 % spreads a burst of failures so they do not all come back in the same millisecond.
  const jittered = base === 0 ? 0 : Math.round(base * (0.9 + 0.2 * random()));
  if (retryAfterSeconds === null) return jittered;
  return Math.max(jittered, Math.min(retryAfterSeconds, RETRY_AFTER_CAP_SECONDS) * 1000);
}
