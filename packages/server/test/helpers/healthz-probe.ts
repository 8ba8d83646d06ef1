/**
 * SPEC §12 "the event loop is never held": GET /healthz of a real listening server, asked again and again while
 * `busy` runs (each answer awaited, a short pause between two), and the slowest answer's time. A held event loop
 * shows as one slow answer, however short the work before and after it.
 */
export async function slowestHealthzDuring(baseUrl: string, busy: Promise<unknown>): Promise<{ slowestMs: number; samples: number }> {
  let running = true;
  const settled = busy.then(
    () => (running = false),
    () => (running = false),
  );
  let slowestMs = 0;
  let samples = 0;
  while (running) {
    const started = performance.now();
    const res = await fetch(`${baseUrl}/healthz`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
    slowestMs = Math.max(slowestMs, performance.now() - started);
    samples++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await settled;
  return { slowestMs, samples };
}
