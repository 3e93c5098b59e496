/** A minimal Server-Sent Events parser over a fetch body (event, data, id; comments ignored). */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** `onChunk`: called as each chunk arrives, a heartbeat comment included (a stream's sign of life). */
export async function* readSse(body: ReadableStream<Uint8Array>, onChunk?: () => void): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: Partial<SseEvent> & { data?: string } = {};
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    onChunk?.();
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer[newline] === '\r' ? 2 : 1));
      if (line === '') {
        if (event.data !== undefined)
          yield { event: event.event ?? 'message', data: event.data, ...(event.id ? { id: event.id } : {}) };
        event = {};
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event.event = value;
      else if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
      else if (field === 'id') event.id = value;
    }
  }
}
