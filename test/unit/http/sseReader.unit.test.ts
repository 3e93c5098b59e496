import { readSse } from '../../../src/adapters/http/client/sseReader';

const streamOf = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

test('parses events split across chunks, skips comments and retry lines, joins multi-line data', async () => {
  const events = [];
  for await (const event of readSse(
    streamOf(
      'retry: 2000\n\nevent: sy',
      'nc\ndata: {"unreadCount":1}\n\n: heartbeat\n\n',
      'event: wake\r\nid: 7\r\ndata: {"a":\r\ndata: 1}\r\n\r\n',
    ),
  ))
    events.push(event);
  expect(events).toEqual([
    { event: 'sync', data: '{"unreadCount":1}' },
    { event: 'wake', id: '7', data: '{"a":\n1}' },
  ]);
});
