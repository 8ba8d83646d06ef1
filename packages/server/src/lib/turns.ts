/**
 * Resolves in a later turn of the event loop, after pending I/O callbacks (requests, timers) have run. Work that
 * goes on in batches awaits it between two batches: on SQLite every statement runs synchronously and a chain of
 * awaits on settled promises never leaves the microtask queue, so without it a long job of many short batches
 * would still keep every request waiting until it ends.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
