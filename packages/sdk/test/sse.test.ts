import { describe, expect, it } from 'vitest';
import { readSse, SseLineTooLong } from '../src/client/sse.js';

/**
 * svc's one SSE reader (the SDK's event stream and `svc listen` read with it): line ends of every kind, characters
 * split between chunks, and the bound on a line or a message's data (SPEC §12).
 */

describe('readSse', () => {
  async function* chunks(...parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
    for (const p of parts) yield typeof p === 'string' ? new TextEncoder().encode(p) : p;
  }
  const all = async (body: AsyncIterable<Uint8Array>, maxLineBytes?: number) => {
    const out = [];
    for await (const m of readSse(body, { maxLineBytes })) out.push(m);
    return out;
  };

  it('takes LF, CRLF and CR line ends, also a CRLF split between chunks, and multi-byte characters split anywhere', async () => {
    const euro = new TextEncoder().encode('data: €\n\n');
    const messages = await all(chunks('id: 1\r', '\nevent: a\r\ndata: x\r\r', 'data: y\ndata: z\n', '\n', euro.subarray(0, 8), euro.subarray(8), ': ping\n\n'));
    expect(messages).toEqual([
      { id: '1', event: 'a', data: 'x' },
      { id: '1', event: 'message', data: 'y\nz' },
      { id: '1', event: 'message', data: '€' },
    ]);
  });

  it('refuses a line, or a message of many lines, over the bound', async () => {
    await expect(all(chunks('data: ', 'x'.repeat(50), '\n\n'), 64)).resolves.toHaveLength(1);
    await expect(all(chunks('data: ', 'x'.repeat(30), 'x'.repeat(30)), 64)).rejects.toBeInstanceOf(SseLineTooLong);
    await expect(all(chunks(`data: ${'x'.repeat(40)}\n`, `data: ${'x'.repeat(40)}\n\n`), 64)).rejects.toBeInstanceOf(SseLineTooLong);
    // Comments and pings count per line, never together.
    await expect(all(chunks(': '.padEnd(60, 'p') + '\n', ': '.padEnd(60, 'p') + '\n', 'data: ok\n\n'), 64)).resolves.toHaveLength(1);
  });
});
