/**
 * The call a JSON-RPC body names (id, method, tool), read from its bytes in any chunking, without parsing it: what
 * POST /mcp answers a tool call too large to be read with. Keys of the same name inside the arguments are never
 * taken for the call's.
 */
import { JsonRpcCallScanner } from '../../src/adapters/mcp/jsonRpcCallScanner';

/** Scans `text` cut into chunks of `size` bytes. */
function scan(text: string, size = Number.MAX_SAFE_INTEGER) {
  const scanner = new JsonRpcCallScanner();
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) scanner.write(bytes.subarray(i, i + size));
  return scanner.result();
}

const sdkOrder = (args: object, id: unknown = 7) =>
  `{"method":"tools/call","params":{"name":"add_message","arguments":${JSON.stringify(args)}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;

test.each([1, 2, 3, 7, 64, 100_000])('the id after the arguments (the SDK order), in chunks of %i bytes', (size) => {
  const args = { to: '@b', subject: 'x "quoted" \\ back', body: `a${'\\"'.repeat(10)}"id": 99, }{][ ${'é'.repeat(50)}`, id: 5 };
  expect(scan(sdkOrder(args), size)).toEqual({ batch: false, id: 7, method: 'tools/call', tool: 'add_message' });
});

test('the id first, a string id, whitespace and escapes in the keys and values', () => {
  const text =
    ' {\n "jsonrpc" : "2.0", "\\u0069d" : "call-\\"1\\"" , "method":"tools/call", "params": { "arguments": {"name": "not it", "id": 3}, "name" : "get_\\u006dessage" } } ';
  expect(scan(text, 5)).toEqual({ batch: false, id: 'call-"1"', method: 'tools/call', tool: 'get_message' });
});

test('what is not one call names nothing it cannot be sure of', () => {
  expect(scan(`[${sdkOrder({})}]`)).toEqual({ batch: true });
  // an id that is no JSON-RPC id (a fraction, an object), an id given twice
  expect(scan('{"id": 1.5, "method": "tools/call"}')).toEqual({ batch: false, method: 'tools/call' });
  expect(scan('{"id": {"a": 1}, "method": "tools/list"}')).toEqual({ batch: false, method: 'tools/list' });
  expect(scan('{"id": 1, "id": 2, "method": "tools/call"}')).toEqual({ batch: false, method: 'tools/call' });
  // a truncated body: what was seen so far
  expect(scan('{"method": "tools/call", "params": {"name": "add_message", "arguments": {"body": "xxxx')).toEqual({
    batch: false,
    method: 'tools/call',
    tool: 'add_message',
  });
  // a key or value too long to be one looked for
  expect(scan(`{"${'i'.repeat(300)}": 4, "method": "${'m'.repeat(300)}", "id": 2}`)).toEqual({ batch: false, id: 2 });
});

test('a chunk of many short strings is read in one pass, not once per string', () => {
  // 1.8 MB in one chunk: searching the rest of the chunk for a backslash at every string took 6 s on a loaded machine
  // (quadratic in the strings of a chunk), one pass under 1 s
  const args = { list: Array.from({ length: 300_000 }, (_, i) => `s${i % 10}`) };
  const started = performance.now();
  expect(scan(sdkOrder(args), 2 * 1024 * 1024)).toEqual({ batch: false, id: 7, method: 'tools/call', tool: 'add_message' });
  expect(performance.now() - started).toBeLessThan(3_000);
});
