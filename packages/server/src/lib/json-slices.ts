import type { Pace } from './turns.js';

/**
 * JSON made ahead as UTF-8 bytes, written as they are by jsonInSlices: each of a large document's many parts (one a
 * collection) is made at once, so the objects it was made from die young and the bytes stay off the JavaScript heap.
 * Held as objects until the whole document was written, 2,000 collections of 50 fields grew the heap by 150 MB, and
 * the young-generation collections that copied them held the event loop 20–130 ms each; as bytes, their 8,000 parts
 * hold 1.4 MB of heap and 14 MB outside it. JSON.stringify cannot write them (no JSON.rawJSON before Node 21): it
 * throws.
 */
export class JsonBytes {
  constructor(readonly bytes: Buffer) {}

  static of(value: unknown): JsonBytes {
    return new JsonBytes(Buffer.from(JSON.stringify(value)));
  }

  toJSON(): never {
    throw new Error('JsonBytes are written by jsonInSlices, not JSON.stringify');
  }
}

/** What JSON.stringify leaves out of an object and writes as null in an array. */
const unwritable = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** Whether JSON.stringify writes `v` at once here: a primitive, or an object with toJSON. */
const atOnce = (v: unknown): boolean => v === null || typeof v !== 'object' || (!Array.isArray(v) && typeof (v as { toJSON?: unknown }).toJSON === 'function');

/**
 * The JSON text of `value` as UTF-8 bytes, written in slices between which other work runs (Pace): objects and arrays
 * entry by entry, JsonBytes as they are, anything else by JSON.stringify. One JSON.stringify of the admin OpenAPI
 * document of 2,000 collections of 50 fields (14 MB) held the event loop 140–190 ms. The same text as JSON.stringify
 * for plain objects, arrays and primitives.
 */
export async function jsonInSlices(value: object, pace: Pace): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length > 0) chunks.push(Buffer.from(text.join('')));
    text = [];
  };
  const entry = async (v: unknown): Promise<void> => {
    if (v instanceof JsonBytes) {
      flush();
      chunks.push(v.bytes);
    } else if (atOnce(v)) text.push(JSON.stringify(v));
    else await write(v as object);
    if (pace.spent()) {
      flush();
      await pace.next();
    }
  };
  const write = async (v: object): Promise<void> => {
    if (Array.isArray(v)) {
      text.push('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) text.push(',');
        await entry(unwritable(v[i]) ? null : v[i]);
      }
      text.push(']');
      return;
    }
    text.push('{');
    let first = true;
    for (const [key, item] of Object.entries(v)) {
      if (unwritable(item)) continue;
      text.push(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
      first = false;
      await entry(item);
    }
    text.push('}');
  };
  await entry(value);
  flush();
  // Copied together in slices too: one Buffer.concat of 8,000 parts (14 MB) took 70–80 ms, most of it the first
  // touch of the new memory's pages (the same copy again took 2–12 ms).
  const bytes = Buffer.allocUnsafeSlow(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
    await pace.slice();
  }
  return bytes;
}
