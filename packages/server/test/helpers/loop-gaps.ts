/**
 * SPEC §12 "the event loop is never held", measured by the clock: the time `request` takes, and the longest the event
 * loop went without running a 5 ms timer meanwhile. A held loop shows as one long gap, however short the work before
 * and after it; no sleep decides anything.
 */
export async function timed<T>(request: () => Promise<T>): Promise<{ result: T; ms: number; longestGap: number }> {
  let last = performance.now();
  let longestGap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 5);
  const start = performance.now();
  try {
    const result = await request();
    const ms = performance.now() - start;
    longestGap = Math.max(longestGap, performance.now() - last);
    return { result, ms, longestGap };
  } finally {
    clearInterval(tick);
  }
}
