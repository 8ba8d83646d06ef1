/**
 * Counts the event loop's turns with an immediate that sets itself again: what a test notes when it asserts that some
 * work ran in turns of its own (a claim's groups, attempts, page reads), a claim rather than a clock.
 */
export function turnCounter(): { readonly turn: number; stop(): void } {
  let turn = 0;
  let ticking = true;
  const tick = () => {
    turn++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turn() {
      return turn;
    },
    stop() {
      ticking = false;
    },
  };
}
