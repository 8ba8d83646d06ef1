// The SDK imports nothing from the server: the same small parser as svc listen's, kept here on its own.
/** One message of a Server-Sent Events stream; comments are dropped. */
export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/**
 * Parses an SSE body (the fields svc sends: id, event, data, retry) into messages. `onRetry` hears the
 * server's reconnection delay. Lines may end in LF, CRLF or CR, as the SSE format allows.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, onRetry: (ms: number) => void = () => {}): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let event = '';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop()!;
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const at = line.indexOf(':');
      const field = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'id') id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) onRetry(Number(value));
    }
  }
}
