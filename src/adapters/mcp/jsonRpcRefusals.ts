/**
 * JSON-RPC messages the MCP SDK's transports would answer wrongly or not at all, refused here with the error JSON-RPC
 * 2.0 names for each; its data is the mailbox's envelope, whose message says the valid form. No SDK import: POST /mcp
 * checks these before it loads the SDK.
 */
import { MailboxError } from '../../errors';

/** A JSON-RPC error answer (id null: the request's id could not be read) whose data is the envelope. */
export const jsonRpcError = (code: number, error: MailboxError, id: string | number | null = null) => ({
  jsonrpc: '2.0',
  id,
  error: { code, message: error.message, data: error.envelope },
});

/**
 * `batches`: whether the transport takes a batch (stdio takes one message per line).
 * JSON-RPC 2.0 answers an empty array with one Invalid Request error; the SDK's transport read it as a batch of
 * nothing but notifications and answered an empty 202, as if something had been accepted.
 */
export function emptyBatch(body: unknown, batches = true): MailboxError | null {
  if (!Array.isArray(body) || body.length > 0) return null;
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    'Invalid Request: an empty batch ([]) holds no message, so nothing was done. Send one JSON-RPC request, e.g. ' +
      `{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}${batches ? ', or an array of one or more.' : ', on a line of its own.'}`,
    { field: 'body' },
  );
}

type Json = Record<string, unknown>;

const EXAMPLE = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}';
const REQUEST_KEYS = ['jsonrpc', 'id', 'method', 'params'];

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const isId = (value: unknown): value is string | number => typeof value === 'string' || Number.isSafeInteger(value);

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** What is wrong with `message` (called `subject`), which the SDK does not take as JSON-RPC: [field, a sentence]. */
function whatIsWrong(message: unknown, subject: string): [string, string] {
  if (!isObject(message))
    return ['body', `${subject} is ${kindOf(message)}, not a JSON-RPC message: an object such as ${EXAMPLE}`];
  if (message.jsonrpc !== '2.0') {
    const has = 'jsonrpc' in message ? `"jsonrpc": ${JSON.stringify(message.jsonrpc)}` : 'no "jsonrpc"';
    return ['jsonrpc', `${subject} has ${has}: it must be "2.0"`];
  }
  if (!('method' in message) && !('result' in message) && !('error' in message))
    return ['method', `${subject} has no "method": a request names its method, e.g. ${EXAMPLE}`];
  if ('method' in message) {
    if (typeof message.method !== 'string')
      return ['method', `the "method" of ${subject} must be a string naming the method, e.g. "tools/list"`];
    if ('id' in message && !isId(message.id))
      return [
        'id',
        `the "id" of ${subject} must be a string or an integer (got ${kindOf(message.id)}); only a notifications/* method goes without one`,
      ];
    if ('params' in message && !isObject(message.params))
      return [
        'params',
        `the "params" of ${subject} must be an object of named parameters (got ${kindOf(message.params)}), or left out`,
      ];
    const unknown = Object.keys(message).filter((key) => !REQUEST_KEYS.includes(key));
    if (unknown.length > 0)
      return [
        unknown[0],
        `${subject} holds ${unknown.map((key) => `"${key}"`).join(', ')}: a request holds only ${REQUEST_KEYS.join(', ')}`,
      ];
  }
  return [
    'body',
    `${subject} is not a JSON-RPC 2.0 message: a request is an object such as ${EXAMPLE}; a response holds jsonrpc, id and result or error`,
  ];
}

/**
 * A JSON value that is no JSON-RPC message (`isMessage`: the SDK's own test, so that what passes here the SDK takes):
 * JSON-RPC 2.0 calls it an Invalid Request (-32600). The SDK's transport answered -32700 "Parse error: Invalid JSON-RPC
 * message", the code of JSON that could not be parsed, naming nothing. A batch is refused whole, naming its first
 * such entry (nothing of it runs). The answer carries the message's id when it could be read.
 */
export function invalidJsonRpc(
  body: unknown,
  isMessage: (message: unknown) => boolean,
): { error: MailboxError; id: string | number | null } | null {
  const batch = Array.isArray(body);
  const messages: unknown[] = batch ? body : [body];
  const index = messages.findIndex((message) => !isMessage(message));
  if (index < 0) return null;
  const message = messages[index];
  const [field, wrong] = whatIsWrong(message, batch ? `batch entry [${index}]` : 'the message');
  const text = `Invalid Request: ${wrong}. Nothing ${batch ? 'in the batch ' : ''}was done.`;
  const id = !batch && isObject(message) && isId(message.id) ? message.id : null;
  return {
    error: new MailboxError('VALIDATION_FAILED', 'Validation failed', text, { field, ...(batch ? { index } : {}) }),
    id,
  };
}
